//===- SpecFormat.cpp - compiled programs as JSON files -------------------===//

#include "kiln/SpecFormat.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kiln {

using json = nlohmann::ordered_json;

namespace {

constexpr const char *kFormatName = "kiln-program";

/// Compact JSON; bytes that are not UTF-8 (a variant name is the user's)
/// become U+FFFD instead of aborting (this code has no exceptions).
std::string dumpText(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json exprToJson(const SizeExpr &e) {
  if (e.op == SizeExpr::Op::Constant)
    return e.value;
  if (e.op == SizeExpr::Op::Symbol)
    return e.symbol;
  json array = json::array({opName(e.op)});
  for (const SizeExpr &operand : e.operands)
    array.push_back(exprToJson(operand));
  return array;
}

json shapeToJson(const std::vector<SizeExpr> &shape) {
  json array = json::array();
  for (const SizeExpr &e : shape)
    array.push_back(exprToJson(e));
  return array;
}

json argToJson(const KernelArg &a) {
  switch (a.kind) {
  case KernelArg::Kind::Tensor:
    return {{"tensor", a.name}, {"rank", a.rank}};
  case KernelArg::Kind::Workspace:
    return {{"workspace", a.name}, {"rank", a.rank}};
  case KernelArg::Kind::Capture:
    return {{"capture", a.capture}, {"rank", a.rank}};
  case KernelArg::Kind::Scalar:
    return {{"scalar", exprToJson(a.value)}};
  case KernelArg::Kind::TensorMap:
    return {{"tensor_map", a.name},
            {"dims", a.mapDims},
            {"box", a.box},
            {"swizzle", a.swizzle}};
  }
  return json();
}

/// Reading: every accessor names the field it failed on.
struct Reader {
  std::string error;

  bool fail(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }

  /// Deeper expressions are refused rather than recursed into (the plan's
  /// own are a few levels deep).
  static constexpr int kMaxExprDepth = 32;

  bool expr(const json &j, const std::string &where, SizeExpr &e,
            int depth = 0) {
    if (depth > kMaxExprDepth)
      return fail(where + " nests deeper than " +
                  std::to_string(kMaxExprDepth) + " levels");
    if (j.is_number_integer()) {
      e = SizeExpr::constant(j.get<int64_t>());
      return true;
    }
    if (j.is_string()) {
      e = SizeExpr::named(j.get<std::string>());
      return true;
    }
    if (!j.is_array() || j.empty() || !j[0].is_string())
      return fail(where +
                  " must be an integer, a symbol or [\"op\", ...], "
                  "got " +
                  j.dump());
    SizeExpr::Op op;
    if (!opFromName(j[0].get<std::string>(), op))
      return fail(where + " uses operator '" + j[0].get<std::string>() +
                  "'; expected add, sub, mul, ceildiv, max or min");
    std::vector<SizeExpr> operands(j.size() - 1);
    for (size_t i = 1; i < j.size(); ++i)
      if (!expr(j[i], where, operands[i - 1], depth + 1))
        return false;
    e = SizeExpr::apply(op, std::move(operands));
    return true;
  }

  bool shape(const json &j, const std::string &where,
             std::vector<SizeExpr> &out) {
    if (!j.is_array())
      return fail(where + " must be an array");
    out.resize(j.size());
    for (size_t i = 0; i < j.size(); ++i)
      if (!expr(j[i], where + "[" + std::to_string(i) + "]", out[i]))
        return false;
    return true;
  }

  const json *field(const json &object, const char *name,
                    const std::string &where) {
    if (!object.is_object())
      return fail(where + " must be an object"), nullptr;
    auto it = object.find(name);
    if (it == object.end())
      return fail(where + " lacks \"" + name + "\""), nullptr;
    return &*it;
  }

  bool string(const json &object, const char *name, const std::string &where,
              std::string &out) {
    const json *j = field(object, name, where);
    if (!j)
      return false;
    if (!j->is_string())
      return fail(where + "." + name + " must be a string");
    out = j->get<std::string>();
    return true;
  }

  bool integer(const json &object, const char *name, const std::string &where,
               int64_t &out) {
    const json *j = field(object, name, where);
    if (!j)
      return false;
    if (!j->is_number_integer())
      return fail(where + "." + name + " must be an integer");
    out = j->get<int64_t>();
    return true;
  }

  bool dtype(const json &object, const char *name, const std::string &where,
             DType &out) {
    std::string text;
    if (!string(object, name, where, text))
      return false;
    if (!dtypeFromName(text, out))
      return fail(where + "." + name + " is '" + text +
                  "'; expected bf16, fp16, f32, f64, i32 or i64");
    return true;
  }

  const json *array(const json &object, const char *name,
                    const std::string &where) {
    const json *j = field(object, name, where);
    if (j && !j->is_array())
      return fail(where + "." + name + " must be an array"), nullptr;
    return j;
  }

  bool arg(const json &j, const std::string &where, KernelArg &a) {
    if (!j.is_object())
      return fail(where + " must be an object");
    if (j.contains("tensor") || j.contains("workspace")) {
      bool tensor = j.contains("tensor");
      a.kind = tensor ? KernelArg::Kind::Tensor : KernelArg::Kind::Workspace;
      return string(j, tensor ? "tensor" : "workspace", where, a.name) &&
             integer(j, "rank", where, a.rank);
    }
    if (j.contains("capture")) {
      a.kind = KernelArg::Kind::Capture;
      return integer(j, "capture", where, a.capture) &&
             integer(j, "rank", where, a.rank);
    }
    if (j.contains("scalar")) {
      a.kind = KernelArg::Kind::Scalar;
      return expr(j["scalar"], where + ".scalar", a.value);
    }
    if (j.contains("tensor_map")) {
      a.kind = KernelArg::Kind::TensorMap;
      const json *dims = array(j, "dims", where);
      const json *box = array(j, "box", where);
      if (!string(j, "tensor_map", where, a.name) || !dims || !box ||
          !integer(j, "swizzle", where, a.swizzle))
        return false;
      for (auto [list, name, out] :
           {std::tuple{dims, "dims", &a.mapDims}, {box, "box", &a.box}})
        for (const json &v : *list) {
          if (!v.is_number_integer())
            return fail(where + "." + name + " must hold integers");
          out->push_back(v.get<int64_t>());
        }
      return true;
    }
    return fail(where + " must have one of \"tensor\", \"capture\", "
                        "\"workspace\", \"scalar\", \"tensor_map\"");
  }

  bool program(const json &j, ProgramSpec &s) {
    const std::string top = "the spec";
    if (!j.is_object())
      return fail("a spec must be a JSON object");
    if (!j.contains("format") || j["format"] != kFormatName ||
        !j.contains("version"))
      return fail("this is not a Kiln program spec of a known version (no "
                  "\"format\": \"kiln-program\" and \"version\"; specs of "
                  "Kiln 0.1 had neither): recompile it with `kiln compile`");
    // Version 2 is version 3 without derived symbols and launch conditions.
    if (j["version"] != kSpecFormatVersion && j["version"] != 2)
      return fail("the spec has format version " + j["version"].dump() +
                  "; this runtime reads version " +
                  std::to_string(kSpecFormatVersion) +
                  ": recompile it with `kiln compile`");
    if (!string(j, "variant", top, s.variant) ||
        !string(j, "kind", top, s.kind) || !string(j, "arch", top, s.arch) ||
        !string(j, "source", top, s.source) ||
        !dtype(j, "dtype", top, s.dtype) ||
        !integer(j, "head_dim_qk", top, s.headDimQK) ||
        !integer(j, "head_dim_v", top, s.headDimV) ||
        !integer(j, "gqa_group", top, s.gqaGroup) ||
        !integer(j, "block_m", top, s.blockM) ||
        !integer(j, "block_n", top, s.blockN) ||
        !string(j, "schedule", top, s.schedule))
      return false;
    const json *tensors = array(j, "tensors", top);
    const json *captures = array(j, "captures", top);
    const json *workspaces = array(j, "workspaces", top);
    const json *constraints = array(j, "constraints", top);
    const json *kernels = array(j, "kernels", top);
    if (!tensors || !captures || !workspaces || !constraints || !kernels)
      return false;
    for (size_t i = 0; i < tensors->size(); ++i) {
      const json &t = (*tensors)[i];
      std::string where = "tensors[" + std::to_string(i) + "]";
      TensorDecl d;
      if (!string(t, "name", where, d.name) ||
          !dtype(t, "dtype", where, d.dtype) ||
          !integer(t, "align", where, d.alignBytes))
        return false;
      const json *sh = array(t, "shape", where);
      if (!sh || !shape(*sh, where + ".shape", d.shape))
        return false;
      s.tensors.push_back(std::move(d));
    }
    for (size_t i = 0; i < captures->size(); ++i) {
      const json &c = (*captures)[i];
      std::string where = "captures[" + std::to_string(i) + "]";
      CaptureSpec d;
      if (!string(c, "name", where, d.name) ||
          !dtype(c, "dtype", where, d.dtype))
        return false;
      const json *dims = array(c, "dims", where);
      if (!dims)
        return false;
      for (const json &dim : *dims) {
        if (dim.is_string())
          d.dims.push_back(dim.get<std::string>());
        else if (dim.is_number_integer())
          d.dims.push_back(std::to_string(dim.get<int64_t>()));
        else
          return fail(where + ".dims must hold symbols or sizes");
      }
      s.captures.push_back(std::move(d));
    }
    for (size_t i = 0; i < workspaces->size(); ++i) {
      const json &w = (*workspaces)[i];
      std::string where = "workspaces[" + std::to_string(i) + "]";
      WorkspaceDecl d;
      const json *zero = field(w, "zero_fill", where);
      const json *sh = array(w, "shape", where);
      if (!string(w, "name", where, d.name) ||
          !dtype(w, "dtype", where, d.dtype) || !zero || !sh ||
          !shape(*sh, where + ".shape", d.shape))
        return false;
      if (!zero->is_boolean())
        return fail(where + ".zero_fill must be true or false");
      d.zeroFill = zero->get<bool>();
      s.workspaces.push_back(std::move(d));
    }
    for (size_t i = 0; i < constraints->size(); ++i) {
      const json &c = (*constraints)[i];
      std::string where = "constraints[" + std::to_string(i) + "]";
      if (!c.is_array() || c.size() != 2)
        return fail(where + " must be a pair [lhs, rhs]");
      std::pair<SizeExpr, SizeExpr> pair;
      if (!expr(c[0], where, pair.first) || !expr(c[1], where, pair.second))
        return false;
      s.constraints.push_back(std::move(pair));
    }
    if (j.contains("symbols")) {
      const json &symbols = j["symbols"];
      if (!symbols.is_object())
        return fail("the spec's \"symbols\" must be an object");
      for (const auto &[name, e] : symbols.items()) {
        SizeExpr value;
        if (!expr(e, "symbols." + name, value))
          return false;
        s.symbols.emplace_back(name, std::move(value));
      }
    }
    for (size_t i = 0; i < kernels->size(); ++i) {
      const json &k = (*kernels)[i];
      std::string where = "kernels[" + std::to_string(i) + "]";
      KernelLaunch d;
      if (k.is_object() && k.contains("when") &&
          !expr(k["when"], where + ".when", d.when))
        return false;
      const json *grid = array(k, "grid", where);
      const json *args = array(k, "args", where);
      if (!string(k, "name", where, d.name) ||
          !integer(k, "threads", where, d.numThreads) ||
          !integer(k, "shared_bytes", where, d.sharedBytes) || !grid || !args)
        return false;
      if (k.contains("overlaps_prior")) {
        if (!k["overlaps_prior"].is_boolean())
          return fail(where + ".overlaps_prior must be true or false");
        d.overlapsPrior = k["overlaps_prior"].get<bool>();
      }
      if (grid->size() != 3)
        return fail(where + ".grid must have 3 expressions (x, y, z)");
      for (int axis = 0; axis < 3; ++axis)
        if (!expr((*grid)[axis], where + ".grid", d.grid[axis]))
          return false;
      d.args.resize(args->size());
      for (size_t a = 0; a < args->size(); ++a)
        if (!arg((*args)[a], where + ".args[" + std::to_string(a) + "]",
                 d.args[a]))
          return false;
      s.kernels.push_back(std::move(d));
    }
    return true;
  }
};

} // namespace

bool dtypeFromName(const std::string &name, DType &dtype) {
  for (DType d : {DType::BF16, DType::F16, DType::F32, DType::F64, DType::I32,
                  DType::I64})
    if (name == dtypeName(d)) {
      dtype = d;
      return true;
    }
  return false;
}

std::string writeSpecJson(const ProgramSpec &s) {
  json j;
  j["format"] = kFormatName;
  j["version"] = kSpecFormatVersion;
  j["variant"] = s.variant;
  j["kind"] = s.kind;
  j["arch"] = s.arch;
  j["dtype"] = dtypeName(s.dtype);
  j["head_dim_qk"] = s.headDimQK;
  j["head_dim_v"] = s.headDimV;
  j["gqa_group"] = s.gqaGroup;
  j["block_m"] = s.blockM;
  j["block_n"] = s.blockN;
  j["schedule"] = s.schedule;
  json tensors = json::array();
  for (const TensorDecl &t : s.tensors)
    tensors.push_back({{"name", t.name},
                       {"dtype", dtypeName(t.dtype)},
                       {"shape", shapeToJson(t.shape)},
                       {"align", t.alignBytes}});
  j["tensors"] = tensors;
  json captures = json::array();
  for (const CaptureSpec &c : s.captures)
    captures.push_back(
        {{"name", c.name}, {"dtype", dtypeName(c.dtype)}, {"dims", c.dims}});
  j["captures"] = captures;
  json workspaces = json::array();
  for (const WorkspaceDecl &w : s.workspaces)
    workspaces.push_back({{"name", w.name},
                          {"dtype", dtypeName(w.dtype)},
                          {"shape", shapeToJson(w.shape)},
                          {"zero_fill", w.zeroFill}});
  j["workspaces"] = workspaces;
  json constraints = json::array();
  for (const auto &[lhs, rhs] : s.constraints)
    constraints.push_back(json::array({exprToJson(lhs), exprToJson(rhs)}));
  j["constraints"] = constraints;
  // Written only when the plan derives symbols.
  if (!s.symbols.empty()) {
    json symbols = json::object();
    for (const auto &[name, e] : s.symbols)
      symbols[name] = exprToJson(e);
    j["symbols"] = symbols;
  }
  json kernels = json::array();
  for (const KernelLaunch &k : s.kernels) {
    json args = json::array();
    for (const KernelArg &a : k.args)
      args.push_back(argToJson(a));
    json kernel = {
        {"name", k.name},
        {"grid", json::array({exprToJson(k.grid[0]), exprToJson(k.grid[1]),
                              exprToJson(k.grid[2])})}};
    // Written only when the kernel does not always launch.
    if (k.when.op != SizeExpr::Op::Constant || k.when.value != 1)
      kernel["when"] = exprToJson(k.when);
    kernel["threads"] = k.numThreads;
    kernel["shared_bytes"] = k.sharedBytes;
    // Written only when set.
    if (k.overlapsPrior)
      kernel["overlaps_prior"] = true;
    kernel["args"] = args;
    kernels.push_back(kernel);
  }
  j["kernels"] = kernels;
  j["source"] = s.source;
  // One field per line, and one element per line in lists of objects: a
  // reader (and FileCheck) sees each tensor, workspace and kernel whole.
  std::string text = "{\n";
  size_t field = 0;
  for (const auto &[key, value] : j.items()) {
    text += " " + dumpText(json(key)) + ": ";
    if (value.is_array() && !value.empty() && value[0].is_object()) {
      text += "[\n";
      for (size_t i = 0; i < value.size(); ++i)
        text +=
            "  " + dumpText(value[i]) + (i + 1 < value.size() ? ",\n" : "\n");
      text += " ]";
    } else {
      text += dumpText(value);
    }
    text += ++field < j.size() ? ",\n" : "\n";
  }
  return text + "}\n";
}

Status readSpecJson(const std::string &text, ProgramSpec &spec) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::error("the spec is not valid JSON");
  Reader reader;
  ProgramSpec result;
  if (!reader.program(j, result))
    return Status::error("malformed spec: " + reader.error);
  if (Status s = verifyPlan(result); !s.ok())
    return s;
  spec = std::move(result);
  return Status();
}

Status readSpecFile(const std::string &path, ProgramSpec &spec) {
  std::ifstream in(path);
  if (!in)
    return Status::error("cannot read spec file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  if (Status s = readSpecJson(text.str(), spec); !s.ok())
    return Status::error(path + ": " + s.message());
  return Status();
}

} // namespace kiln
