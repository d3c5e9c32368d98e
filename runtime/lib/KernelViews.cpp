//===- KernelViews.cpp - forward and backward as named-tensor views -------===//
//
// ForwardKernel and BackwardKernel only name the tensors of their calls; the
// plan decides the kernels, their order, grids and arguments.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime.h"

namespace kiln {

namespace {

Status loadOfKind(const ProgramSpec &spec, const char *kind, int ordinal,
                  std::unique_ptr<Program> &program) {
  if (spec.kind != kind)
    return Status::error("'" + spec.variant + "' is a " + spec.kind +
                         " program; expected a " + kind + " program");
  return Program::load(spec, ordinal, program);
}

} // namespace

Status ForwardKernel::load(const ProgramSpec &spec, int ordinal,
                           std::unique_ptr<ForwardKernel> &kernel) {
  auto result = std::unique_ptr<ForwardKernel>(new ForwardKernel());
  if (Status s = loadOfKind(spec, "forward", ordinal, result->program_);
      !s.ok())
    return s;
  kernel = std::move(result);
  return Status();
}

Status ForwardKernel::forward(const TensorRef &q, const TensorRef &k,
                              const TensorRef &v, const TensorRef &out,
                              const TensorRef &lse,
                              const std::vector<TensorRef> &captures,
                              void *stream) const {
  return program_->run(
      {{"q", q}, {"k", k}, {"v", v}, {"out", out}, {"lse", lse}}, captures,
      stream);
}

Status BackwardKernel::load(const ProgramSpec &spec, int ordinal,
                            std::unique_ptr<BackwardKernel> &kernel) {
  auto result = std::unique_ptr<BackwardKernel>(new BackwardKernel());
  if (Status s = loadOfKind(spec, "backward", ordinal, result->program_);
      !s.ok())
    return s;
  kernel = std::move(result);
  return Status();
}

Status BackwardKernel::backward(const TensorRef &q, const TensorRef &k,
                                const TensorRef &v, const TensorRef &out,
                                const TensorRef &dout, const TensorRef &lse,
                                const TensorRef &dq, const TensorRef &dk,
                                const TensorRef &dv,
                                const std::vector<TensorRef> &captures,
                                void *stream) const {
  return program_->run({{"q", q},
                        {"k", k},
                        {"v", v},
                        {"out", out},
                        {"dout", dout},
                        {"lse", lse},
                        {"dq", dq},
                        {"dk", dk},
                        {"dv", dv}},
                       captures, stream);
}

} // namespace kiln
