//===- LaunchPlan.h - a compiled program's launches as data -----*- C++ -*-===//
//
// The contract between the compiler and the runtime. A compiled program (a
// variant's forward with its split-KV combine, its backward, later block-mask
// builders) is CUDA source plus this plan: the tensors it reads and writes,
// its captures, the scratch memory it needs, the choices it makes per run
// (derived symbols), and its kernels in launch order, each with a grid given
// as expressions of the problem's sizes, a launch condition and its
// arguments given by role. The runtime validates and launches any plan with
// one code path; it knows no variant, schedule or kernel name.
//
// Needs no MLIR: the compiler fills it from the tile program's attributes,
// `kiln compile` writes it as JSON (SpecFormat.h), the runtime reads it back.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LAUNCHPLAN_H
#define KILN_LAUNCHPLAN_H

#include "kiln/Types.h"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// An integer expression over the problem's symbols: a constant, a symbol
/// (batch, heads, kv_heads, seq_q, seq_kv, num_sms, ctas_per_sm.<kernel>, or
/// one the plan derives),
/// or add / sub / mul / ceildiv / max / min of operands. Written in JSON and
/// in the tile dialect's attributes the same way: 64, "seq_q",
/// ["ceildiv", "seq_q", 64].
struct SizeExpr {
  enum class Op { Constant, Symbol, Add, Sub, Mul, CeilDiv, Max, Min };
  Op op = Op::Constant;
  int64_t value = 0;              ///< Constant
  std::string symbol;             ///< Symbol
  /// Add, Mul, Max, Min: 2 or more; Sub (a - b - ...): 2 or more; CeilDiv: 2.
  std::vector<SizeExpr> operands;

  static SizeExpr constant(int64_t v);
  static SizeExpr named(std::string symbol);
  static SizeExpr apply(Op op, std::vector<SizeExpr> operands);

  /// "ceildiv(seq_q, 64)".
  std::string str() const;
};

/// The operator's spelling ("add", "sub", "mul", "ceildiv", "max", "min");
/// null for
/// Constant and Symbol. `opFromName` is its inverse.
const char *opName(SizeExpr::Op op);
bool opFromName(const std::string &name, SizeExpr::Op &op);

/// The symbols a size expression may name. num_sms is the device's
/// multiprocessor count (persistent grids: one CTA per SM); the others are
/// bound from the program's tensors when it runs.
const std::vector<std::string> &problemSymbols();

/// "ctas_per_sm.<kernel>": how many CTAs of that kernel of the plan one
/// multiprocessor holds at once, a device symbol like num_sms (split-KV
/// sizes its grid in whole waves of it).
std::string ctasPerSmSymbol(const std::string &kernel);
/// num_sms or a ctas_per_sm symbol: the device's, not the problem's.
bool isDeviceSymbol(const std::string &name);

/// What the device contributes to a run's symbols: num_sms, and per kernel
/// the CTAs one multiprocessor holds (the driver's occupancy for the
/// kernel's threads, registers and shared memory). Kernels missing from
/// `ctasPerSm` count 1: the CPU backend runs one program at a time on one
/// "multiprocessor".
struct DeviceSymbols {
  DeviceSymbols(int64_t numSms = 1) : numSms(numSms) {}
  int64_t numSms;
  std::map<std::string, int64_t> ctasPerSm;
};

using SymbolValues = std::map<std::string, int64_t>;

/// The value of `e`; an error names an unbound symbol, a division by a
/// non-positive number or an overflow of 64 bits.
Status evaluate(const SizeExpr &e, const SymbolValues &values, int64_t &result);

/// A tensor the caller passes by name. Its shape binds symbols: the first
/// tensor (in declaration order) with a bare symbol at a dimension defines
/// the symbol; every other use must agree.
struct TensorDecl {
  std::string name;
  DType dtype = DType::BF16;
  std::vector<SizeExpr> shape;
  /// The compiler writes at least the element size: the kernels index the
  /// innermost dimension with a literal stride of 1. 16 where they copy rows
  /// in chunks (cp.async, TMA): base pointer and every other stride
  /// multiples of it. The runtime checks a unit innermost stride and the
  /// element size's alignment whatever a spec says (one of an older
  /// compiler may say 0).
  int64_t alignBytes = 0;
};

/// Device scratch memory the runtime allocates per stream: a contiguous
/// array of `shape`, shared by every kernel argument that names it.
struct WorkspaceDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<SizeExpr> shape;
  bool zeroFill = false; ///< cleared on the stream before the first kernel
};

/// One argument of a kernel, by role.
struct KernelArg {
  enum class Kind { Tensor, Capture, Workspace, Scalar, TensorMap };
  Kind kind = Kind::Tensor;
  /// Tensor, Workspace: its name; TensorMap: the tensor (or workspace) it
  /// describes.
  std::string name;
  int64_t capture = 0; ///< Capture: index into ProgramSpec::captures
  /// Tensor, Capture, Workspace: passed as Tensor<T, rank> (pointer, rank
  /// sizes, rank strides, all 64-bit).
  int64_t rank = 0;
  SizeExpr value; ///< Scalar: passed as a 64-bit integer
  /// TensorMap: which of the tensor's dimensions the map walks, innermost
  /// first (a permutation starting with the tensor's last, contiguous,
  /// dimension: [3, 1, 2, 0] walks a [B, N, H, D] tensor as D, N, H, B so
  /// that a box covers rows of one head), the box over the first of them (1
  /// beyond), and the swizzle in bytes (0, 32, 64, 128). The runtime encodes
  /// it per launch (cuTensorMapEncodeTiled; sm_90a only) and passes the 128
  /// bytes by value.
  std::vector<int64_t> mapDims;
  std::vector<int64_t> box;
  int64_t swizzle = 0;
};

/// One launch: grid (x, y, z), block of `numThreads`, dynamic shared memory.
struct KernelLaunch {
  std::string name; ///< the __global__ function in the program's source
  std::array<SizeExpr, 3> grid;
  /// Launched only when this evaluates to at least 1 (split-KV's combine
  /// kernel runs only when there are splits to combine).
  SizeExpr when = SizeExpr::constant(1);
  int64_t numThreads = 128;
  int64_t sharedBytes = 0;
  /// The kernel waits for the stream's previous grids before touching
  /// global memory (griddepcontrol.wait, tgpu-overlap-launches), so the
  /// runtime launches it with programmatic stream serialization: it may
  /// start while the previous kernel finishes.
  bool overlapsPrior = false;
  std::vector<KernelArg> args;
};

/// A compiled program: what `kiln compile` writes and Program::load reads.
struct ProgramSpec {
  std::string variant; ///< the attn.attention's name
  std::string kind;    ///< "forward" or "backward"
  std::string arch;    ///< sm_80 or sm_90a
  /// CUDA C++ including "kiln/kiln.cuh": one section per kernel, each
  /// compiled on its own (CompileUnits.h).
  std::string source;
  /// Descriptive: what the variant was compiled for (reports, benchmarks).
  DType dtype = DType::BF16;
  int64_t headDimQK = 0, headDimV = 0, gqaGroup = 1, blockM = 0, blockN = 0;
  std::string schedule; ///< backward: "two-kernel", "atomic" or
                        ///< "atomic-ordered" (ordered dQ adds)

  std::vector<TensorDecl> tensors;
  std::vector<CaptureSpec> captures;
  std::vector<WorkspaceDecl> workspaces;
  /// Symbols the plan derives from the problem's: a choice made at run time,
  /// such as the number of KV splits of a decode step. Each is an expression
  /// over the problem's symbols, evaluated once they are bound; its value
  /// must be at least 1. A caller may set one instead (Program::run's
  /// overrides: benchmarks, tests).
  std::vector<std::pair<std::string, SizeExpr>> symbols;
  /// Pairs that must be equal (GQA: heads = kv_heads * G).
  std::vector<std::pair<SizeExpr, SizeExpr>> constraints;
  std::vector<KernelLaunch> kernels; ///< in launch order

  /// "<variant>_<kind>": how messages, logs and NVRTC name the program.
  std::string displayName() const { return variant + "_" + kind; }

  const TensorDecl *findTensor(const std::string &name) const;
  const WorkspaceDecl *findWorkspace(const std::string &name) const;
  /// Whether `name` is one of the plan's derived symbols.
  bool derives(const std::string &name) const;
  TensorDecl *findTensor(const std::string &name) {
    return const_cast<TensorDecl *>(std::as_const(*this).findTensor(name));
  }
  WorkspaceDecl *findWorkspace(const std::string &name) {
    return const_cast<WorkspaceDecl *>(
        std::as_const(*this).findWorkspace(name));
  }
};

/// The plan's own consistency, without a device: known symbols and
/// operators, arguments naming declared tensors / captures / workspaces at
/// their declared ranks, launchable block sizes. Messages name the program,
/// the kernel and the argument.
Status verifyPlan(const ProgramSpec &spec);

/// A tensor passed to a program by name.
struct NamedTensor {
  std::string name;
  TensorRef tensor;
};

/// The host-side part of a run: the plan's symbols bound from the tensors,
/// and the tensors in the plan's declaration order.
struct BoundRun {
  SymbolValues symbols;
  std::vector<const TensorRef *> tensors; ///< parallel to spec.tensors
};

/// Matches `tensors` to the plan's declarations by name, each exactly once:
/// `slots` parallel to spec.tensors.
Status matchTensors(const ProgramSpec &spec,
                    const std::vector<NamedTensor> &tensors,
                    std::vector<const TensorRef *> &slots);

/// What bindRun checks of the tensors' pointers alone (none null, the
/// plan's alignments), for a run whose shapes bindRun has passed before.
Status checkPointers(const ProgramSpec &spec,
                     const std::vector<const TensorRef *> &slots,
                     const std::vector<TensorRef> &captures);

/// Matches `tensors` to the plan's declarations by name (each exactly once),
/// binds the symbols their shapes define (num_sms and ctas_per_sm.<kernel>
/// from `device`), then checks
/// every tensor's dtype, rank, shape, strides and alignment, the plan's
/// constraints, and the captures against their declarations; last, the
/// plan's derived symbols, each from its expression or from `overrides`
/// (which may name derived symbols only, with values of at least 1).
/// Touches no device (the CPU backend runs plans too); the launcher checks
/// that the pointers are device memory.
Status bindRun(const ProgramSpec &spec, const std::vector<NamedTensor> &tensors,
               const std::vector<TensorRef> &captures,
               const DeviceSymbols &device, BoundRun &bound,
               const SymbolValues &overrides = {});

/// A paged KV cache's contents (plans with block_table, kv_lens and the
/// pools k [pages, page_size, ...]): every kv_lens[b] in [0, max_pages *
/// page_size] and every table entry a sequence uses (slots below
/// ceil(kv_lens[b] / page_size)) a page of the pool. Reads the two tensors,
/// so they must be host memory (the CPU backend calls it on every run; the
/// GPU launcher cannot without a copy, and its kernels read a missing page
/// as zeros instead). A plan without them passes.
Status validatePagedKV(const ProgramSpec &spec, const BoundRun &bound);

/// A varlen batch's offsets (plans with cu_seqlens_q / cu_seqlens_kv):
/// each starts at 0 or more, never decreases and ends within its packed
/// rows (total_q / total_kv). Reads the offsets, so they must be host memory
/// (the CPU backend calls it on every run); the GPU's kernels clamp every
/// offset into the array instead, so bad offsets there reach no memory
/// outside it but give wrong sequences. A plan without them passes.
Status validateVarlen(const ProgramSpec &spec, const BoundRun &bound);

/// A block mask's lists (plans with kv_num_blocks / kv_indices /
/// full_kv_*, and the transposed q_num_blocks / q_indices / full_q_*):
/// every count within [0, blocks], every listed number within [0, blocks)
/// and no block listed twice in one row (partial and full lists together:
/// it would be visited twice). Reads the lists, so they must be host memory
/// (the CPU backend calls it on every run); the GPU's kernels clamp counts
/// and numbers instead, so bad lists there read no memory outside the
/// tensors but give wrong results. A plan without them passes, and so does
/// a builder's (no out or dq: it writes the lists).
Status validateBlockLists(const ProgramSpec &spec, const BoundRun &bound);

/// Whether `kernel` is launched for `symbols` (its `when` is at least 1).
Status kernelLaunches(const KernelLaunch &kernel, const SymbolValues &symbols,
                      bool &launches);

/// Where each workspace starts in one buffer (256-byte aligned offsets) and
/// its contiguous shape, for `symbols`; `totalBytes` is the buffer's size.
/// A dimension may evaluate to 0: such a workspace takes no memory (split-KV's
/// partial results when the run does not split).
struct WorkspaceLayout {
  std::vector<size_t> offsets;
  std::vector<std::vector<int64_t>> shapes;
  size_t totalBytes = 0;
};
Status layoutWorkspaces(const ProgramSpec &spec, const SymbolValues &symbols,
                        WorkspaceLayout &layout);

/// The kernel's grid for `symbols`, within CUDA's limits (x < 2^31, y and z
/// at most 65535, each at least 1).
Status evaluateGrid(const ProgramSpec &spec, const KernelLaunch &kernel,
                    const SymbolValues &symbols, std::array<int64_t, 3> &grid);

} // namespace kiln

#endif // KILN_LAUNCHPLAN_H
