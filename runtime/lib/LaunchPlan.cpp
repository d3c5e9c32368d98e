//===- LaunchPlan.cpp - size expressions and the plan's own checks --------===//

#include "kiln/LaunchPlan.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {

SizeExpr SizeExpr::constant(int64_t v) {
  SizeExpr e;
  e.value = v;
  return e;
}

SizeExpr SizeExpr::named(std::string symbol) {
  SizeExpr e;
  e.op = Op::Symbol;
  e.symbol = std::move(symbol);
  return e;
}

SizeExpr SizeExpr::apply(Op op, std::vector<SizeExpr> operands) {
  SizeExpr e;
  e.op = op;
  e.operands = std::move(operands);
  return e;
}

const char *opName(SizeExpr::Op op) {
  switch (op) {
  case SizeExpr::Op::Add:
    return "add";
  case SizeExpr::Op::Sub:
    return "sub";
  case SizeExpr::Op::Mul:
    return "mul";
  case SizeExpr::Op::CeilDiv:
    return "ceildiv";
  case SizeExpr::Op::Max:
    return "max";
  case SizeExpr::Op::Min:
    return "min";
  case SizeExpr::Op::Constant:
  case SizeExpr::Op::Symbol:
    break;
  }
  return nullptr;
}

bool opFromName(const std::string &name, SizeExpr::Op &op) {
  for (SizeExpr::Op candidate :
       {SizeExpr::Op::Add, SizeExpr::Op::Sub, SizeExpr::Op::Mul,
        SizeExpr::Op::CeilDiv, SizeExpr::Op::Max, SizeExpr::Op::Min})
    if (name == opName(candidate)) {
      op = candidate;
      return true;
    }
  return false;
}

std::string SizeExpr::str() const {
  if (op == Op::Constant)
    return std::to_string(value);
  if (op == Op::Symbol)
    return symbol;
  std::string s = std::string(opName(op)) + "(";
  for (size_t i = 0; i < operands.size(); ++i)
    s += (i ? ", " : "") + operands[i].str();
  return s + ")";
}

const std::vector<std::string> &problemSymbols() {
  // pages and max_pages: a paged KV cache's pool and block table;
  // total_q and total_kv: the rows of a packed (varlen) batch.
  static const std::vector<std::string> symbols{
      "batch", "heads",     "kv_heads", "seq_q",    "seq_kv",
      "pages", "max_pages", "total_q",  "total_kv", "num_sms"};
  return symbols;
}

namespace {
constexpr const char kCtasPerSmPrefix[] = "ctas_per_sm.";
} // namespace

std::string ctasPerSmSymbol(const std::string &kernel) {
  return kCtasPerSmPrefix + kernel;
}

bool isDeviceSymbol(const std::string &name) {
  return name == "num_sms" || name.rfind(kCtasPerSmPrefix, 0) == 0;
}

Status evaluate(const SizeExpr &e, const SymbolValues &values,
                int64_t &result) {
  switch (e.op) {
  case SizeExpr::Op::Constant:
    result = e.value;
    return Status();
  case SizeExpr::Op::Symbol: {
    auto it = values.find(e.symbol);
    if (it == values.end())
      return Status::error("'" + e.symbol + "' has no value here");
    result = it->second;
    return Status();
  }
  default:
    break;
  }
  std::vector<int64_t> xs;
  for (const SizeExpr &operand : e.operands) {
    int64_t x = 0;
    if (Status s = evaluate(operand, values, x); !s.ok())
      return s;
    xs.push_back(x);
  }
  if (xs.size() < 2 || (e.op == SizeExpr::Op::CeilDiv && xs.size() != 2))
    return Status::error("'" + e.str() + "' has the wrong number of operands");
  int64_t acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    int64_t x = xs[i];
    bool overflow = false;
    switch (e.op) {
    case SizeExpr::Op::Add:
      overflow = __builtin_add_overflow(acc, x, &acc);
      break;
    case SizeExpr::Op::Sub:
      overflow = __builtin_sub_overflow(acc, x, &acc);
      break;
    case SizeExpr::Op::Min:
      acc = std::min(acc, x);
      break;
    case SizeExpr::Op::Mul:
      overflow = __builtin_mul_overflow(acc, x, &acc);
      break;
    case SizeExpr::Op::Max:
      acc = std::max(acc, x);
      break;
    case SizeExpr::Op::CeilDiv:
      if (x <= 0)
        return Status::error("'" + e.str() + "' divides by " +
                             std::to_string(x));
      // Division truncates towards zero, which already rounds a negative
      // numerator up (and never negates INT64_MIN).
      acc = acc / x + (acc % x != 0 && acc > 0);
      break;
    default:
      break;
    }
    if (overflow)
      return Status::error("'" + e.str() + "' overflows 64 bits");
  }
  result = acc;
  return Status();
}

const TensorDecl *ProgramSpec::findTensor(const std::string &name) const {
  for (const TensorDecl &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool ProgramSpec::derives(const std::string &name) const {
  return std::any_of(symbols.begin(), symbols.end(),
                     [&](const auto &s) { return s.first == name; });
}

const WorkspaceDecl *ProgramSpec::findWorkspace(const std::string &name) const {
  for (const WorkspaceDecl &w : workspaces)
    if (w.name == name)
      return &w;
  return nullptr;
}

namespace {

/// Known symbols (the problem's, the device's for the plan's kernels, and
/// with `derived` the plan's derived ones), operators of the right arity.
Status checkExpr(const SizeExpr &e, const std::string &where,
                 const ProgramSpec &spec, bool derived) {
  switch (e.op) {
  case SizeExpr::Op::Constant:
    return Status();
  case SizeExpr::Op::Symbol: {
    const auto &known = problemSymbols();
    bool kernelSymbol = std::any_of(
        spec.kernels.begin(), spec.kernels.end(), [&](const KernelLaunch &k) {
          return e.symbol == ctasPerSmSymbol(k.name);
        });
    if (std::find(known.begin(), known.end(), e.symbol) == known.end() &&
        !kernelSymbol && !(derived && spec.derives(e.symbol))) {
      std::string names;
      for (const std::string &name : known)
        names += name + ", ";
      names += "ctas_per_sm.<one of its kernels>";
      if (derived)
        for (const auto &[name, expr] : spec.symbols)
          names += ", " + name;
      return Status::error(where + " names '" + e.symbol +
                           "'; a size expression may name " + names);
    }
    return Status();
  }
  case SizeExpr::Op::CeilDiv:
    if (e.operands.size() != 2)
      return Status::error(where + ": ceildiv takes 2 operands, got " +
                           std::to_string(e.operands.size()));
    break;
  default:
    if (e.operands.size() < 2)
      return Status::error(where + ": " + opName(e.op) +
                           " takes 2 or more operands, got " +
                           std::to_string(e.operands.size()));
    break;
  }
  for (const SizeExpr &operand : e.operands)
    if (Status s = checkExpr(operand, where, spec, derived); !s.ok())
      return s;
  return Status();
}

Status checkShape(const std::vector<SizeExpr> &shape, const std::string &what,
                  const ProgramSpec &spec) {
  if (shape.empty() || shape.size() > 4)
    return Status::error(what + " has rank " + std::to_string(shape.size()) +
                         "; tensors have rank 1 to 4");
  for (size_t i = 0; i < shape.size(); ++i) {
    std::string where = what + " dimension " + std::to_string(i);
    if (Status s = checkExpr(shape[i], where, spec, true); !s.ok())
      return s;
    if (shape[i].op == SizeExpr::Op::Constant && shape[i].value < 1)
      return Status::error(where + " is " + std::to_string(shape[i].value) +
                           "; sizes are at least 1");
  }
  return Status();
}

/// Names, dtypes the kernels take, and dims that are problem symbols or
/// positive sizes, at most 4 of them.
Status checkCaptures(const ProgramSpec &spec, const std::string &program) {
  std::set<std::string> names;
  for (const CaptureSpec &c : spec.captures) {
    std::string what = program + ": capture '" + c.name + "'";
    if (c.name.empty() || !names.insert(c.name).second)
      return Status::error(what + " is declared twice or without a name");
    if (c.dtype == DType::BF16 || c.dtype == DType::F16)
      return Status::error(what + " holds " + dtypeName(c.dtype) +
                           "; captures are f32, f64, i32 or i64");
    if (c.dims.size() > 4)
      return Status::error(what + " has " + std::to_string(c.dims.size()) +
                           " dims; captures have at most 4");
    for (const std::string &dim : c.dims) {
      const auto &known = problemSymbols();
      if (dim != "num_sms" &&
          std::find(known.begin(), known.end(), dim) != known.end())
        continue;
      char *end = nullptr;
      long long size = std::strtoll(dim.c_str(), &end, 10);
      if (dim.empty() || *end != '\0' || size < 1)
        return Status::error(
            what + " declares dim '" + dim +
            "'; a dim is batch, heads, kv_heads, seq_q, seq_kv or a size");
    }
  }
  return Status();
}

Status checkArg(const ProgramSpec &spec, const KernelArg &arg,
                const std::string &where) {
  auto rankMismatch = [&](const std::string &what, size_t declared) {
    return Status::error(where + " passes " + what + " at rank " +
                         std::to_string(arg.rank) + "; it is declared with " +
                         std::to_string(declared) + " dimensions");
  };
  switch (arg.kind) {
  case KernelArg::Kind::Tensor: {
    const TensorDecl *t = spec.findTensor(arg.name);
    if (!t)
      return Status::error(where + " names tensor '" + arg.name +
                           "', which the program does not declare");
    if (arg.rank != static_cast<int64_t>(t->shape.size()))
      return rankMismatch("tensor '" + arg.name + "'", t->shape.size());
    return Status();
  }
  case KernelArg::Kind::Workspace: {
    const WorkspaceDecl *w = spec.findWorkspace(arg.name);
    if (!w)
      return Status::error(where + " names workspace '" + arg.name +
                           "', which the program does not declare");
    if (arg.rank != static_cast<int64_t>(w->shape.size()))
      return rankMismatch("workspace '" + arg.name + "'", w->shape.size());
    return Status();
  }
  case KernelArg::Kind::Capture: {
    if (arg.capture < 0 ||
        arg.capture >= static_cast<int64_t>(spec.captures.size()))
      return Status::error(where + " names capture " +
                           std::to_string(arg.capture) + "; the program has " +
                           std::to_string(spec.captures.size()));
    size_t dims = spec.captures[arg.capture].dims.size();
    // A capture without dims is passed as a rank-1 array.
    if (arg.rank != static_cast<int64_t>(dims ? dims : 1))
      return rankMismatch("capture '" + spec.captures[arg.capture].name + "'",
                          dims ? dims : 1);
    return Status();
  }
  case KernelArg::Kind::Scalar:
    return checkExpr(arg.value, where, spec, true);
  case KernelArg::Kind::TensorMap: {
    // A tensor's map, or a workspace's (the atomic backward adds its dQ
    // shares into the accumulator through one).
    const std::vector<SizeExpr> *shape = nullptr;
    DType dtype = DType::F32;
    if (const TensorDecl *t = spec.findTensor(arg.name)) {
      shape = &t->shape;
      dtype = t->dtype;
    } else if (const WorkspaceDecl *w = spec.findWorkspace(arg.name)) {
      shape = &w->shape;
      dtype = w->dtype;
    }
    if (!shape)
      return Status::error(where + " maps tensor '" + arg.name +
                           "', which the program declares neither as a "
                           "tensor nor as a workspace");
    size_t rank = shape->size();
    std::vector<int64_t> seen(rank, 0);
    bool permutation = arg.mapDims.size() == rank;
    for (int64_t d : arg.mapDims)
      permutation = permutation && d >= 0 &&
                    d < static_cast<int64_t>(seen.size()) && !seen[d]++;
    if (!permutation || arg.mapDims[0] != static_cast<int64_t>(seen.size()) - 1)
      return Status::error(where + ": the tensor map's dims must order all " +
                           std::to_string(rank) + " dimensions of '" +
                           arg.name + "', its last (contiguous) one first");
    if (arg.box.empty() || arg.box.size() > rank)
      return Status::error(where + ": the tensor map's box has " +
                           std::to_string(arg.box.size()) + " dims, tensor '" +
                           arg.name + "' " + std::to_string(rank));
    for (int64_t b : arg.box)
      if (b < 1 || b > 256)
        return Status::error(where + ": a box dimension is " +
                             std::to_string(b) + "; TMA boxes hold 1 to 256");
    if (arg.swizzle != 0 && arg.swizzle != 32 && arg.swizzle != 64 &&
        arg.swizzle != 128)
      return Status::error(where + ": swizzle " + std::to_string(arg.swizzle) +
                           " is not 0, 32, 64 or 128 bytes");
    // The copy engine moves whole 16-byte chunks of the innermost box row,
    // and a swizzled row must fit the swizzle's span.
    int64_t rowBytes = arg.box[0] * static_cast<int64_t>(dtypeBytes(dtype));
    if (rowBytes % 16 != 0)
      return Status::error(where + ": the box's innermost extent is " +
                           std::to_string(rowBytes) +
                           " bytes; TMA needs a multiple of 16");
    if (arg.swizzle != 0 && rowBytes > arg.swizzle)
      return Status::error(where + ": the box's innermost extent is " +
                           std::to_string(rowBytes) +
                           " bytes, wider than its " +
                           std::to_string(arg.swizzle) + "-byte swizzle");
    return Status();
  }
  }
  return Status::error(where + " has an unknown kind");
}

} // namespace

Status verifyPlan(const ProgramSpec &spec) {
  std::string program = "program '" + spec.variant + "'";
  if (spec.kind != "forward" && spec.kind != "backward")
    return Status::error(program + " has kind '" + spec.kind +
                         "'; expected forward or backward");
  if (spec.kernels.empty())
    return Status::error(program + " has no kernels");
  std::set<std::string> symbolNames(problemSymbols().begin(),
                                    problemSymbols().end());
  for (const auto &[name, expr] : spec.symbols) {
    if (name.empty() || !symbolNames.insert(name).second)
      return Status::error(program + " derives symbol '" + name +
                           "' twice, without a name or with a problem "
                           "symbol's name");
    // Over the problem's symbols only: derived ones are evaluated in no
    // particular order.
    if (Status s = checkExpr(expr, program + ": symbol '" + name + "'",
                             spec, /*derived=*/false);
        !s.ok())
      return s;
  }
  std::set<std::string> names;
  for (const TensorDecl &t : spec.tensors) {
    if (t.name.empty() || !names.insert(t.name).second)
      return Status::error(program + " declares tensor '" + t.name +
                           "' twice or without a name");
    // Tensors bind the problem's symbols; they cannot use derived ones.
    if (Status s = checkShape(t.shape, program + ": tensor '" + t.name + "'",
                              ProgramSpec());
        !s.ok())
      return s;
    if (t.alignBytes < 0 || (t.alignBytes & (t.alignBytes - 1)) != 0)
      return Status::error(program + ": tensor '" + t.name +
                           "' has alignment " + std::to_string(t.alignBytes) +
                           "; it must be 0 or a power of two");
  }
  for (const WorkspaceDecl &w : spec.workspaces) {
    if (w.name.empty() || !names.insert(w.name).second)
      return Status::error(program + " declares workspace '" + w.name +
                           "' twice, without a name or with a tensor's name");
    if (Status s = checkShape(w.shape,
                              program + ": workspace '" + w.name + "'", spec);
        !s.ok())
      return s;
  }
  if (Status s = checkCaptures(spec, program); !s.ok())
    return s;
  for (const auto &[lhs, rhs] : spec.constraints)
    for (const SizeExpr *e : {&lhs, &rhs})
      if (Status s = checkExpr(*e, program + ": a constraint", spec,
                               /*derived=*/false);
          !s.ok())
        return s;
  for (const KernelLaunch &k : spec.kernels) {
    std::string where = program + ": kernel '" + k.name + "'";
    if (k.name.empty())
      return Status::error(program + " has a kernel without a name");
    if (k.numThreads < 1 || k.numThreads > 1024)
      return Status::error(where + " has " + std::to_string(k.numThreads) +
                           " threads; a block holds 1 to 1024");
    if (k.sharedBytes < 0)
      return Status::error(where + " has a negative shared memory size");
    for (int axis = 0; axis < 3; ++axis)
      if (Status s = checkExpr(k.grid[axis],
                               where + " grid " + std::string(1, "xyz"[axis]),
                               spec, true);
          !s.ok())
        return s;
    if (Status s = checkExpr(k.when, where + " 'when'", spec, true); !s.ok())
      return s;
    for (size_t i = 0; i < k.args.size(); ++i)
      if (Status s = checkArg(spec, k.args[i],
                              where + " argument " + std::to_string(i));
          !s.ok())
        return s;
  }
  return Status();
}

Status validatePagedKV(const ProgramSpec &spec, const BoundRun &bound) {
  auto find = [&](const char *name) -> const TensorRef * {
    for (size_t i = 0; i < spec.tensors.size(); ++i)
      if (spec.tensors[i].name == name && i < bound.tensors.size())
        return bound.tensors[i];
    return nullptr;
  };
  const TensorRef *table = find("block_table"), *lens = find("kv_lens"),
                  *pool = find("k");
  if (!table || !lens || !pool)
    return Status();
  if (table->sizes.size() != 2 || lens->sizes.size() != 1 ||
      pool->sizes.size() < 2 || table->dtype != DType::I32 ||
      lens->dtype != DType::I32)
    return Status::error("block_table, kv_lens and k must be [batch, "
                         "max_pages] i32, [batch] i32 and a pool [pages, "
                         "page_size, ...]");
  int64_t pages = pool->sizes[0], pageSize = pool->sizes[1];
  int64_t maxPages = table->sizes[1];
  const auto *t = static_cast<const int32_t *>(table->data);
  const auto *l = static_cast<const int32_t *>(lens->data);
  for (int64_t b = 0; b < lens->sizes[0]; ++b) {
    int64_t len = l[b * lens->strides[0]];
    if (len < 0 || len > maxPages * pageSize)
      return Status::error("kv_lens[" + std::to_string(b) +
                           "] = " + std::to_string(len) +
                           " is outside [0, max_pages * page_size = " +
                           std::to_string(maxPages * pageSize) + "]");
    for (int64_t slot = 0; slot * pageSize < len; ++slot) {
      int64_t page = t[b * table->strides[0] + slot * table->strides[1]];
      if (page < 0 || page >= pages)
        return Status::error(
            "block_table[" + std::to_string(b) + ", " + std::to_string(slot) +
            "] = " + std::to_string(page) +
            " names no page of the pool (pages = " + std::to_string(pages) +
            ")");
    }
  }
  return Status();
}

Status validateBlockLists(const ProgramSpec &spec, const BoundRun &bound) {
  auto find = [&](const std::string &name) -> const TensorRef * {
    for (size_t i = 0; i < spec.tensors.size(); ++i)
      if (spec.tensors[i].name == name && i < bound.tensors.size())
        return bound.tensors[i];
    return nullptr;
  };
  // The lists are inputs of attention's programs (which write out or dq);
  // a block mask's builder writes them.
  if (!find("out") && !find("dq"))
    return Status();
  for (std::string side : {"kv", "q"}) {
    const TensorRef *num = find(side + "_num_blocks"),
                    *idx = find(side + "_indices"),
                    *fullNum = find("full_" + side + "_num_blocks"),
                    *fullIdx = find("full_" + side + "_indices");
    if (!num || !idx || !fullNum || !fullIdx)
      continue;
    for (const TensorRef *t : {num, idx, fullNum, fullIdx})
      if (t->dtype != DType::I32 ||
          t->sizes.size() != (t == num || t == fullNum ? 3u : 4u))
        return Status::error("a block mask's lists must be i32 [batch, heads, "
                             "blocks] and [batch, heads, blocks, blocks]");
    int64_t rows = num->sizes[2], blocks = idx->sizes[3];
    std::vector<char> seen(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < num->sizes[0]; ++b)
      for (int64_t h = 0; h < num->sizes[1]; ++h)
        for (int64_t r = 0; r < rows; ++r) {
          std::fill(seen.begin(), seen.end(), 0);
          for (auto [count, list, name] :
               {std::tuple<const TensorRef *, const TensorRef *, std::string>{
                    num, idx, side},
                {fullNum, fullIdx, "full_" + side}}) {
            auto at = [&](const TensorRef *t, int64_t i) {
              return static_cast<const int32_t *>(
                  t->data)[b * t->strides[0] + h * t->strides[1] +
                           r * t->strides[2] +
                           i * (t->sizes.size() > 3 ? t->strides[3] : 0)];
            };
            std::string where = "[" + std::to_string(b) + ", " +
                                std::to_string(h) + ", " + std::to_string(r);
            int64_t n = at(count, 0);
            if (n < 0 || n > blocks)
              return Status::error(
                  name + "_num_blocks" + where + "] = " + std::to_string(n) +
                  " is outside [0, " + std::to_string(blocks) + "]");
            for (int64_t i = 0; i < n; ++i) {
              int64_t block = at(list, i);
              if (block < 0 || block >= blocks)
                return Status::error(name + "_indices" + where + ", " +
                                     std::to_string(i) +
                                     "] = " + std::to_string(block) +
                                     " names no block (there are " +
                                     std::to_string(blocks) + ")");
              if (seen[static_cast<size_t>(block)]++)
                return Status::error(
                    "block " + std::to_string(block) + " is listed twice for " +
                    side + "_num_blocks" + where +
                    "] (partial and full lists together): it would be "
                    "visited twice");
            }
          }
        }
  }
  return Status();
}

Status validateVarlen(const ProgramSpec &spec, const BoundRun &bound) {
  for (auto [name, rows] :
       {std::pair<const char *, const char *>{"cu_seqlens_q", "total_q"},
        {"cu_seqlens_kv", "total_kv"}}) {
    const TensorRef *offsets = nullptr;
    for (size_t i = 0; i < spec.tensors.size(); ++i)
      if (spec.tensors[i].name == name && i < bound.tensors.size())
        offsets = bound.tensors[i];
    auto total = bound.symbols.find(rows);
    if (!offsets || total == bound.symbols.end())
      continue;
    if (offsets->sizes.size() != 1 || offsets->dtype != DType::I32)
      return Status::error(std::string(name) + " must be [batch + 1] i32");
    const auto *cu = static_cast<const int32_t *>(offsets->data);
    int64_t previous = 0;
    for (int64_t b = 0; b < offsets->sizes[0]; ++b) {
      int64_t at = cu[b * offsets->strides[0]];
      if (at < previous || at > total->second)
        return Status::error(
            std::string(name) + "[" + std::to_string(b) + "] = " +
            std::to_string(at) + " is outside [" + std::to_string(previous) +
            ", " + rows + " = " + std::to_string(total->second) +
            "]: offsets start at 0 or more, never decrease and end within " +
            "the packed rows");
      previous = at;
    }
  }
  return Status();
}

} // namespace kiln
