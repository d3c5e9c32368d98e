//===- Attention.cpp - kiln::attention and its backward as C++ ops --------===//
//
// The hot path of the PyTorch package in C++: the ops' schemas, their CPU
// and CUDA kernels (validate, allocate, look the program up, launch through
// the runtime's C API) and their autograd, so that a call from Python costs
// the dispatcher and the launches rather than a Python body (issue 13's
// per-call host time); and kiln::paged_attention, a decode step's op.
// Fake (meta) kernels, the Python API around the ops and the rarer ops
// (block-sparse, the backward with capture gradients) are in kiln/ops.py,
// which this module names as the ops' Python module.
//
//===----------------------------------------------------------------------===//

// Python.h first, with Py_ssize_t lengths for PyArg_ParseTuple's "s#".
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "Programs.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/library.h>

#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::torch_ops {

namespace {

using at::Tensor;
using at::TensorList;

/// torch's name of a dtype, as Python prints it (messages match kiln/ops.py's).
std::string dtypeName(at::ScalarType t) {
  return "torch." + std::string(c10::getDtypeNames(t).first);
}

std::string shapeOf(const Tensor &t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

/// kiln_c.h's element type code of `t`, or an error naming it.
int dtypeCode(const char *what, const Tensor &t) {
  switch (t.scalar_type()) {
  case at::kBFloat16:
    return KILN_BF16;
  case at::kHalf:
    return KILN_FP16;
  case at::kFloat:
    return KILN_F32;
  case at::kDouble:
    return KILN_F64;
  case at::kInt:
    return KILN_I32;
  case at::kLong:
    return KILN_I64;
  default:
    fail(std::string(what) +
         ": Kiln takes bf16, fp16, f32, f64, i32 and "
         "i64 tensors, got " +
         dtypeName(t.scalar_type()));
  }
}

const char *elementType(const Tensor &q) {
  if (q.scalar_type() == at::kBFloat16)
    return "bf16";
  if (q.scalar_type() == at::kHalf)
    return "fp16";
  fail("kiln.attention takes bf16 or fp16 q, k, v; got " +
       dtypeName(q.scalar_type()));
}

/// The named dropout_rng of a call: none, or one int64 [2] (seed, offset).
std::vector<Tensor> dropoutTensors(double dropoutP, TensorList rngs) {
  if (rngs.size() > 1)
    fail("dropout_rng is one tensor, got " + std::to_string(rngs.size()));
  if (dropoutP > 0 && rngs.empty())
    fail("dropout_p > 0 needs dropout_rng: an int64 tensor [2] (seed, "
         "offset)");
  if (rngs.empty())
    return {};
  const Tensor &r = rngs[0];
  if (r.scalar_type() != at::kLong || r.dim() != 1 || r.size(0) != 2)
    fail("dropout_rng must be an int64 tensor [2] (seed, offset), got " +
         dtypeName(r.scalar_type()) + " " + shapeOf(r));
  return {r.contiguous()};
}

void checkOffsets(const char *name, const Tensor &t) {
  if (t.scalar_type() != at::kInt || t.dim() != 1 || t.size(0) < 2)
    fail(std::string(name) +
         " must be an int32 tensor [B + 1] with B >= 1, got " +
         dtypeName(t.scalar_type()) + " " + shapeOf(t));
}

/// cu_seqlens_q and cu_seqlens_kv of a varlen call (none or both).
std::vector<Tensor> offsetTensors(const Tensor &q, TensorList cuSeqlens) {
  if (cuSeqlens.empty()) {
    if (q.dim() != 4)
      fail("q must be [B, Lq, H, D] (or [T, H, D] with cu_seqlens), got " +
           shapeOf(q));
    return {};
  }
  if (cuSeqlens.size() != 2)
    fail("cu_seqlens is [cu_seqlens_q, cu_seqlens_kv], got " +
         std::to_string(cuSeqlens.size()) + " tensors");
  if (q.dim() != 3)
    fail("a varlen q is [T, H, D], got " + shapeOf(q));
  checkOffsets("cu_seqlens_q", cuSeqlens[0]);
  checkOffsets("cu_seqlens_kv", cuSeqlens[1]);
  if (cuSeqlens[0].sizes() != cuSeqlens[1].sizes())
    fail("cu_seqlens_q and cu_seqlens_kv must both be [B + 1], got " +
         shapeOf(cuSeqlens[0]) + " and " + shapeOf(cuSeqlens[1]));
  return {cuSeqlens[0].contiguous(), cuSeqlens[1].contiguous()};
}

void checkDevices(std::initializer_list<TensorList> groups) {
  const Tensor *first = nullptr;
  for (TensorList group : groups)
    for (const Tensor &t : group) {
      if (!first) {
        first = &t;
      } else if (t.device() != first->device()) {
        std::string a = first->device().str(), b = t.device().str();
        fail("all tensors must be on one device, got ['" + std::min(a, b) +
             "', '" + std::max(a, b) + "']");
      }
    }
}

/// The tensors of one run: kiln_tensor descriptors over them (which point
/// into the tensors' own size and stride arrays).
class Arguments {
public:
  // (Pairs hold their tensors by value: a temporary such as
  // `table.contiguous()` is kept alive by the pair, not by a reference.)
  void add(std::initializer_list<std::pair<const char *, Tensor>> tensors) {
    for (const auto &[name, t] : tensors) {
      keep_.push_back(t);
      named_.push_back(describe(name, t));
    }
  }

  /// A call's dropout_rng and cu_seqlens_q / cu_seqlens_kv when it has
  /// them (dropoutTensors, offsetTensors), and its captures.
  void addOptional(const std::vector<Tensor> &rng,
                   const std::vector<Tensor> &offsets, TensorList captures) {
    if (!rng.empty())
      add({{"dropout_rng", rng[0]}});
    if (!offsets.empty())
      add({{"cu_seqlens_q", offsets[0]}, {"cu_seqlens_kv", offsets[1]}});
    for (const Tensor &c : captures) {
      keep_.push_back(c.contiguous());
      captures_.push_back(describe(nullptr, keep_.back()));
    }
  }

  /// Runs `which` of the variant on the tensors' device: the host program
  /// for CPU tensors, the loaded kernels on the current stream for CUDA ones.
  void run(const ProgramOptions &options, const char *which,
           const Tensor &q) const {
    char *error = errorBuffer();
    int numNamed = static_cast<int>(named_.size());
    int numCaptures = static_cast<int>(captures_.size());
    if (q.is_cpu()) {
      if (kiln_host_program_run(hostProgram(options), which, named_.data(),
                                numNamed, captures_.data(), numCaptures, error,
                                kErrorBufferSize))
        fail(error);
      return;
    }
    if (!q.is_cuda())
      fail("Kiln runs on CPU and CUDA tensors, got " + q.device().str());
    // Custom ops get no device guard: the runtime launches in the current
    // context, which must be the tensors' device's.
    c10::DeviceGuard guard(q.device());
    void *stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
                       ->getStream(q.device())
                       .native_handle();
    // Workspaces from torch's caching allocator, on this stream: memory
    // torch accounts for, and a run that CUDA graph capture can record.
    Workspace workspace{q.device(), {}, nullptr};
    // The backward's faster schedule adds dQ atomically where that wins
    // (D = 128 on sm_90a); torch.use_deterministic_algorithms(True) asks
    // for the same bits in every run: the faster deterministic schedule
    // (ordered dQ adds at D >= 128 on sm_90a but for GQA, two kernels
    // elsewhere).
    if (std::string_view(which) == "backward" &&
        at::globalContext().deterministicAlgorithms())
      which = "backward-deterministic";
    if (kiln_program_run_with_allocator(
            deviceProgram(options, which, q.device().index()), named_.data(),
            numNamed, captures_.data(), numCaptures, stream,
            &Workspace::allocate, &workspace, error, kErrorBufferSize)) {
      if (workspace.error)
        std::rethrow_exception(workspace.error);
      fail(error);
    }
  }

private:
  /// A run's workspaces, alive until the run has enqueued its kernels; the
  /// caching allocator then reuses the memory in stream order.
  struct Workspace {
    c10::Device device;
    std::vector<Tensor> blocks;
    /// What the allocator threw (torch's out-of-memory error), rethrown
    /// once the C API has returned.
    std::exception_ptr error;
    static void *allocate(void *context, long long bytes) {
      auto *w = static_cast<Workspace *>(context);
      try {
        w->blocks.push_back(at::empty(
            {bytes}, at::TensorOptions().dtype(at::kByte).device(w->device)));
        return w->blocks.back().data_ptr();
      } catch (...) {
        w->error = std::current_exception();
        return nullptr;
      }
    }
  };

  static kiln_tensor describe(const char *name, const Tensor &t) {
    static_assert(sizeof(int64_t) == sizeof(long long));
    return kiln_tensor{name,
                       t.data_ptr(),
                       dtypeCode(name ? name : "capture", t),
                       static_cast<int>(t.dim()),
                       reinterpret_cast<const long long *>(t.sizes().data()),
                       reinterpret_cast<const long long *>(t.strides().data())};
  }
  std::vector<Tensor> keep_;
  std::vector<kiln_tensor> named_, captures_;
};

ProgramOptions optionsOf(const Tensor &q, const Tensor &v,
                         c10::string_view variant, c10::string_view name,
                         double dropoutP, bool varlen) {
  ProgramOptions o;
  o.text = std::string_view(variant.data(), variant.size());
  o.name = std::string_view(name.data(), name.size());
  o.headDim = q.size(-1);
  o.headDimV = v.size(-1);
  o.dtype = elementType(q);
  o.dropoutP = dropoutP;
  o.varlen = varlen;
  return o;
}

std::vector<int64_t> lseShape(const Tensor &q, bool varlen) {
  // [B, H, Lq]; varlen [H, T_q].
  if (varlen)
    return {q.size(1), q.size(0)};
  return {q.size(0), q.size(2), q.size(1)};
}

std::tuple<Tensor, Tensor>
attentionKernel(const Tensor &qIn, const Tensor &kIn, const Tensor &vIn,
                TensorList captures, c10::string_view variant,
                c10::string_view name, double dropoutP, TensorList dropoutRng,
                TensorList cuSeqlens) {
  std::vector<Tensor> rng = dropoutTensors(dropoutP, dropoutRng);
  std::vector<Tensor> offsets = offsetTensors(qIn, cuSeqlens);
  checkDevices({{qIn, kIn, vIn}, captures, rng, offsets});
  Tensor q = qIn.contiguous(), k = kIn.contiguous(), v = vIn.contiguous();
  bool varlen = !offsets.empty();
  ProgramOptions options = optionsOf(q, v, variant, name, dropoutP, varlen);
  std::vector<int64_t> outShape(q.sizes().begin(), q.sizes().end());
  outShape.back() = v.size(-1);
  Tensor out = at::empty(outShape, q.options());
  Tensor lse = at::empty(lseShape(q, varlen), q.options().dtype(at::kFloat));
  Arguments args;
  args.add({{"q", q}, {"k", k}, {"v", v}, {"out", out}, {"lse", lse}});
  args.addOptional(rng, offsets, captures);
  args.run(options, "forward", q);
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor>
backwardKernel(const Tensor &doutIn, const Tensor &qIn, const Tensor &kIn,
               const Tensor &vIn, const Tensor &outIn, const Tensor &lseIn,
               TensorList captures, c10::string_view variant,
               c10::string_view name, double dropoutP, TensorList dropoutRng,
               TensorList cuSeqlens) {
  std::vector<Tensor> rng = dropoutTensors(dropoutP, dropoutRng);
  std::vector<Tensor> offsets = offsetTensors(qIn, cuSeqlens);
  checkDevices({{doutIn, qIn, kIn, vIn, outIn, lseIn}, captures, rng, offsets});
  Tensor q = qIn.contiguous(), k = kIn.contiguous(), v = vIn.contiguous(),
         out = outIn.contiguous(), dout = doutIn.contiguous(),
         lse = lseIn.contiguous();
  bool varlen = !offsets.empty();
  ProgramOptions options = optionsOf(q, v, variant, name, dropoutP, varlen);
  Tensor dq = at::empty_like(q), dk = at::empty_like(k), dv = at::empty_like(v);
  Arguments args;
  args.add({{"q", q},
            {"k", k},
            {"v", v},
            {"out", out},
            {"dout", dout},
            {"lse", lse},
            {"dq", dq},
            {"dk", dk},
            {"dv", dv}});
  args.addOptional(rng, offsets, captures);
  args.run(options, "backward", q);
  return {dq, dk, dv};
}

/// A paged call's packed queries (chunked prefill): none, or cu_seqlens_q
/// with q [T, H, D].
std::vector<Tensor> queryOffsets(const Tensor &q, TensorList cuSeqlensQ) {
  if (cuSeqlensQ.empty()) {
    if (q.dim() != 4)
      fail("q must be [B, Lq, H, D] (or [T, H, D] with cu_seqlens_q), got " +
           shapeOf(q));
    return {};
  }
  if (cuSeqlensQ.size() != 1)
    fail("cu_seqlens_q is one tensor, got " +
         std::to_string(cuSeqlensQ.size()));
  if (q.dim() != 3)
    fail("packed queries are [T, H, D], got " + shapeOf(q));
  checkOffsets("cu_seqlens_q", cuSeqlensQ[0]);
  return {cuSeqlensQ[0].contiguous()};
}

std::tuple<Tensor, Tensor>
pagedKernel(const Tensor &qIn, const Tensor &kIn, const Tensor &vIn,
            const Tensor &blockTable, const Tensor &kvLens, TensorList captures,
            c10::string_view variant, c10::string_view name,
            TensorList cuSeqlensQ) {
  std::vector<Tensor> offsets = queryOffsets(qIn, cuSeqlensQ);
  checkDevices({{qIn, kIn, vIn, blockTable, kvLens}, captures, offsets});
  if (kIn.dim() != 4)
    fail("k_pages must be [pages, page_size, kv_heads, D], got shape " +
         shapeOf(kIn));
  Tensor q = qIn.contiguous(), k = kIn.contiguous(), v = vIn.contiguous();
  bool varlen = !offsets.empty();
  ProgramOptions options = optionsOf(q, v, variant, name, 0.0, varlen);
  options.pageSize = k.size(1);
  std::vector<int64_t> outShape(q.sizes().begin(), q.sizes().end());
  outShape.back() = v.size(-1);
  Tensor out = at::empty(outShape, q.options());
  Tensor lse = at::empty(lseShape(q, varlen), q.options().dtype(at::kFloat));
  Arguments args;
  args.add({{"q", q},
            {"k", k},
            {"v", v},
            {"out", out},
            {"lse", lse},
            {"block_table", blockTable.contiguous()},
            {"kv_lens", kvLens.contiguous()}});
  if (varlen)
    args.add({{"cu_seqlens_q", offsets[0]}});
  args.addOptional({}, {}, captures);
  args.run(options, "forward", q);
  return {out, lse};
}

//===----------------------------------------------------------------------===//
// Autograd
//===----------------------------------------------------------------------===//

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const c10::TypedOperatorHandle<decltype(attentionKernel)> &attentionOp() {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("kiln::attention", "")
                       .typed<decltype(attentionKernel)>();
  return op;
}

const c10::TypedOperatorHandle<decltype(pagedKernel)> &pagedOp() {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("kiln::paged_attention", "")
                       .typed<decltype(pagedKernel)>();
  return op;
}

const c10::TypedOperatorHandle<decltype(backwardKernel)> &backwardOp() {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("kiln::attention_backward", "")
                       .typed<decltype(backwardKernel)>();
  return op;
}

/// kiln/ops.py's attention_backward_captures (a Python op, defined when
/// kiln.ops is imported, which loads this module): the backward that also
/// returns the captures' gradients, one per capture in their order.
using BackwardCaptures =
    std::tuple<Tensor, Tensor, Tensor, std::vector<Tensor>>(
        const Tensor &, const Tensor &, const Tensor &, const Tensor &,
        const Tensor &, const Tensor &, TensorList, c10::string_view,
        c10::string_view, double, TensorList, TensorList, bool);

const c10::TypedOperatorHandle<BackwardCaptures> &backwardCapturesOp() {
  static auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("kiln::attention_backward_captures", "")
          .typed<BackwardCaptures>();
  return op;
}

struct AttentionFunction : torch::autograd::Function<AttentionFunction> {
  static variable_list forward(AutogradContext *ctx, const Tensor &q,
                               const Tensor &k, const Tensor &v,
                               TensorList captures, c10::string_view variant,
                               c10::string_view name, double dropoutP,
                               TensorList dropoutRng, TensorList cuSeqlens) {
    Tensor out, lse;
    {
      at::AutoDispatchBelowADInplaceOrView below;
      std::tie(out, lse) = attentionOp().call(q, k, v, captures, variant, name,
                                              dropoutP, dropoutRng, cuSeqlens);
    }
    // The backward regenerates the forward's dropout mask from the same rng.
    variable_list saved{q, k, v, out, lse};
    saved.insert(saved.end(), dropoutRng.begin(), dropoutRng.end());
    saved.insert(saved.end(), cuSeqlens.begin(), cuSeqlens.end());
    saved.insert(saved.end(), captures.begin(), captures.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["variant"] = std::string(variant);
    ctx->saved_data["name"] = std::string(name);
    ctx->saved_data["dropout_p"] = dropoutP;
    ctx->saved_data["rngs"] = static_cast<int64_t>(dropoutRng.size());
    ctx->saved_data["offsets"] = static_cast<int64_t>(cuSeqlens.size());
    // Float captures that require grad get theirs (score_mod's reads).
    bool captureGrads = false;
    for (const Tensor &c : captures)
      captureGrads |= c.requires_grad() && c.is_floating_point();
    ctx->saved_data["capture_grads"] = captureGrads;
    // The LSE is returned for callers that merge attention results; it is
    // not differentiated.
    ctx->mark_non_differentiable({lse});
    return {out, lse};
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3],
                 &lse = saved[4];
    int64_t numRngs = ctx->saved_data["rngs"].toInt();
    int64_t numOffsets = ctx->saved_data["offsets"].toInt();
    TensorList rest(saved);
    rest = rest.slice(5);
    TensorList rngs = rest.slice(0, numRngs);
    TensorList offsets = rest.slice(numRngs, numOffsets);
    TensorList captures = rest.slice(numRngs + numOffsets);
    std::string variant = ctx->saved_data["variant"].toStringRef();
    std::string name = ctx->saved_data["name"].toStringRef();
    double dropoutP = ctx->saved_data["dropout_p"].toDouble();

    variable_list result;
    std::vector<Tensor> captureGrads(captures.size());
    Tensor dq, dk, dv;
    if (ctx->saved_data["capture_grads"].toBool()) {
      std::vector<Tensor> all;
      std::tie(dq, dk, dv, all) = backwardCapturesOp().call(
          grads[0], q, k, v, out, lse, captures, variant, name, dropoutP, rngs,
          offsets, at::globalContext().deterministicAlgorithms());
      // One per capture: the gradient of each float capture the score_mod
      // reads, an empty tensor for the others (no gradient).
      for (size_t i = 0; i < captures.size() && i < all.size(); ++i)
        if (captures[i].requires_grad() &&
            all[i].sizes() == captures[i].sizes())
          captureGrads[i] = all[i].to(captures[i].scalar_type());
    } else {
      std::tie(dq, dk, dv) =
          backwardOp().call(grads[0], q, k, v, out, lse, captures, variant,
                            name, dropoutP, rngs, offsets);
    }
    // One entry per forward argument, the lists flattened: q, k, v,
    // captures..., variant, name, dropout_p, dropout_rng..., cu_seqlens....
    result = {dq, dk, dv};
    result.insert(result.end(), captureGrads.begin(), captureGrads.end());
    result.resize(result.size() + 3 + rngs.size() + offsets.size());
    return result;
  }
};

std::tuple<Tensor, Tensor>
attentionAutograd(const Tensor &q, const Tensor &k, const Tensor &v,
                  TensorList captures, c10::string_view variant,
                  c10::string_view name, double dropoutP, TensorList dropoutRng,
                  TensorList cuSeqlens) {
  // Without a gradient to record, straight to the device's kernel:
  // Function::apply would still build a node and save the inputs.
  // (Forward-mode tangents go to Function::apply too, which refuses them.)
  bool record = false;
  auto records = [](const Tensor &t) {
    return (torch::autograd::GradMode::is_enabled() && t.requires_grad()) ||
           t._fw_grad(/*level=*/0).defined();
  };
  for (const Tensor &t : {q, k, v})
    record |= records(t);
  for (const Tensor &c : captures)
    record |= records(c);
  if (!record) {
    at::AutoDispatchBelowADInplaceOrView below;
    return attentionOp().call(q, k, v, captures, variant, name, dropoutP,
                              dropoutRng, cuSeqlens);
  }
  variable_list r = AttentionFunction::apply(q, k, v, captures, variant, name,
                                             dropoutP, dropoutRng, cuSeqlens);
  return {r[0], r[1]};
}

} // namespace

} // namespace kiln::torch_ops

TORCH_LIBRARY_FRAGMENT(kiln, m) {
  // Their fake kernels are registered by kiln.ops (imported with this
  // module); torch imports it when a fake kernel is needed first.
  m.set_python_module("kiln.ops");
  m.def("attention(Tensor q, Tensor k, Tensor v, Tensor[] captures, "
        "str variant, str name, float dropout_p, Tensor[] dropout_rng, "
        "Tensor[] cu_seqlens) -> (Tensor, Tensor)");
  m.def("attention_backward(Tensor dout, Tensor q, Tensor k, Tensor v, "
        "Tensor out, Tensor lse, Tensor[] captures, str variant, str name, "
        "float dropout_p, Tensor[] dropout_rng, Tensor[] cu_seqlens) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("paged_attention(Tensor q, Tensor k_pages, Tensor v_pages, "
        "Tensor block_table, Tensor kv_lens, Tensor[] captures, str variant, "
        "str name, Tensor[] cu_seqlens_q) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(kiln, CPU, m) {
  m.impl("attention", &kiln::torch_ops::attentionKernel);
  m.impl("attention_backward", &kiln::torch_ops::backwardKernel);
  m.impl("paged_attention", &kiln::torch_ops::pagedKernel);
}

TORCH_LIBRARY_IMPL(kiln, CUDA, m) {
  m.impl("attention", &kiln::torch_ops::attentionKernel);
  m.impl("attention_backward", &kiln::torch_ops::backwardKernel);
  m.impl("paged_attention", &kiln::torch_ops::pagedKernel);
}

TORCH_LIBRARY_IMPL(kiln, Autograd, m) {
  m.impl("attention", &kiln::torch_ops::attentionAutograd);
  // Not differentiable (a decode step; no double backward): gradients
  // through them raise instead of going missing.
  m.impl("attention_backward",
         torch::autograd::autogradNotImplementedFallback());
  m.impl("paged_attention", torch::autograd::autogradNotImplementedFallback());
}

namespace kiln::torch_ops {

namespace {

/// The tensors of a Python list (or tuple) of tensors into `out`; false
/// with a Python error set otherwise.
bool unpackTensors(PyObject *list, const char *what, std::vector<Tensor> &out) {
  PyObject *seq = PySequence_Fast(list, what);
  if (!seq)
    return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject **items = PySequence_Fast_ITEMS(seq);
  out.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!THPVariable_Check(items[i])) {
      PyErr_Format(PyExc_TypeError, "%s must hold tensors", what);
      Py_DECREF(seq);
      return false;
    }
    out.push_back(THPVariable_Unpack(items[i]));
  }
  Py_DECREF(seq);
  return true;
}

/// Runs `call` (an op through the dispatcher, returning (out, lse)) without
/// the GIL and returns its two tensors as a Python tuple. Called inside
/// HANDLE_TH_ERRORS: errors reach Python as torch's bindings raise them
/// (RuntimeError for Kiln's, torch.cuda.OutOfMemoryError, a dispatch mode's
/// own exception) and TORCH_WARN as Python warnings.
template <typename Call> PyObject *outAndLse(Call call) {
  Tensor out, lse;
  {
    pybind11::gil_scoped_release noGil;
    std::tie(out, lse) = call();
  }
  PyObject *result = PyTuple_New(2);
  if (!result)
    return nullptr;
  Tensor both[2] = {std::move(out), std::move(lse)};
  for (int i = 0; i < 2; ++i) {
    PyObject *wrapped = THPVariable_Wrap(std::move(both[i]));
    if (!wrapped) {
      Py_DECREF(result);
      return nullptr;
    }
    PyTuple_SET_ITEM(result, i, wrapped);
  }
  return result;
}

/// kiln._C.attention(q, k, v, captures, variant, name, dropout_p,
/// dropout_rng, cu_seqlens): torch.ops.kiln.attention called through the
/// dispatcher (autograd, the device's kernel and any dispatch mode as
/// usual) without the generic operator binding's argument matching, which
/// is most of a call's host time on small problems. kiln/__init__.py uses it
/// for eager calls on plain tensors (not while torch.compile traces, not
/// under a torch function mode, not for tensor subclasses, whose Python
/// overrides only the generic binding honours).
PyObject *attentionFromPython(PyObject *, PyObject *args) {
  HANDLE_TH_ERRORS
  PyObject *q, *k, *v, *captureList, *rngList, *offsetList;
  const char *variant, *name;
  Py_ssize_t variantSize, nameSize;
  double dropoutP;
  if (!PyArg_ParseTuple(args, "O!O!O!Os#s#dOO", THPVariableClass, &q,
                        THPVariableClass, &k, THPVariableClass, &v,
                        &captureList, &variant, &variantSize, &name, &nameSize,
                        &dropoutP, &rngList, &offsetList))
    return nullptr;
  std::vector<Tensor> captures, rngs, offsets;
  if (!unpackTensors(captureList, "captures", captures) ||
      !unpackTensors(rngList, "dropout_rng", rngs) ||
      !unpackTensors(offsetList, "cu_seqlens", offsets))
    return nullptr;
  return outAndLse([&] {
    return attentionOp().call(
        THPVariable_Unpack(q), THPVariable_Unpack(k), THPVariable_Unpack(v),
        captures, c10::string_view(variant, variantSize),
        c10::string_view(name, nameSize), dropoutP, rngs, offsets);
  });
  END_HANDLE_TH_ERRORS
}

/// kiln._C.paged_attention(q, k_pages, v_pages, block_table, kv_lens,
/// captures, variant, name, cu_seqlens_q): torch.ops.kiln.paged_attention
/// the same way (a decode step's op, called once per layer and token).
PyObject *pagedFromPython(PyObject *, PyObject *args) {
  HANDLE_TH_ERRORS
  PyObject *q, *k, *v, *table, *lens, *captureList, *offsetList;
  const char *variant, *name;
  Py_ssize_t variantSize, nameSize;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!Os#s#O", THPVariableClass, &q,
                        THPVariableClass, &k, THPVariableClass, &v,
                        THPVariableClass, &table, THPVariableClass, &lens,
                        &captureList, &variant, &variantSize, &name, &nameSize,
                        &offsetList))
    return nullptr;
  std::vector<Tensor> captures, offsets;
  if (!unpackTensors(captureList, "captures", captures) ||
      !unpackTensors(offsetList, "cu_seqlens_q", offsets))
    return nullptr;
  return outAndLse([&] {
    return pagedOp().call(THPVariable_Unpack(q), THPVariable_Unpack(k),
                          THPVariable_Unpack(v), THPVariable_Unpack(table),
                          THPVariable_Unpack(lens), captures,
                          c10::string_view(variant, variantSize),
                          c10::string_view(name, nameSize), offsets);
  });
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"attention", attentionFromPython, METH_VARARGS,
     "torch.ops.kiln.attention through the dispatcher, for eager calls on "
     "plain tensors"},
    {"paged_attention", pagedFromPython, METH_VARARGS,
     "torch.ops.kiln.paged_attention through the dispatcher, for eager calls "
     "on plain tensors"},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

} // namespace kiln::torch_ops

// `import kiln._C` loads the library, and with it the registrations above.
extern "C" PyObject *PyInit__C() {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1,
                               kiln::torch_ops::methods};
  return PyModule_Create(&module);
}
