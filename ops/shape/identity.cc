// Identity: the input, copied.
#include "ops/registry.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

Status infer_identity(InferContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  forward_symbolic(ctx);
  return Status::ok();
}

Status run_identity(KernelContext& ctx) {
  ctx.set_output(0, ctx.input(0)->clone());
  return Status::ok();
}

}  // namespace

void register_identity(OpRegistry& registry) {
  OpSchema s;
  s.name = "Identity";
  s.doc = "a copy of the input";
  s.inputs = {{"input"}};
  s.outputs = {{"output"}};
  s.infer = infer_identity;
  s.reference = run_identity;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
