// Unsqueeze: inserts dims of size 1 at `axes` (input 1), which index the
// output's dims (rank = input rank + number of axes).
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

// Marks which output dims are the inserted ones.
Result<std::vector<bool>> inserted_dims(const OpContext& ctx,
                                        const std::vector<int64_t>& axes,
                                        size_t in_rank) {
  int64_t out_rank = static_cast<int64_t>(in_rank + axes.size());
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> normalized,
                         normalize_axes(ctx, axes, out_rank));
  std::vector<bool> inserted(out_rank, false);
  for (int64_t axis : normalized) inserted[axis] = true;
  return inserted;
}

Status infer_unsqueeze_shape(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto axes, known_int_list(ctx, 1, "axes"));
  if (!in) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  if (!axes) {
    std::optional<int64_t> n = known_length(ctx, 1);
    ctx.set_output(0, dtype,
                   n ? std::optional<Shape>(unknown_shape(in->rank() + *n))
                     : std::nullopt);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<bool> inserted,
                         inserted_dims(ctx, *axes, in->rank()));
  std::vector<Dim> out;
  size_t next = 0;
  for (bool is_new : inserted) out.push_back(is_new ? Dim(1) : (*in)[next++]);
  ctx.set_output(0, dtype, Shape(std::move(out)));
  return Status::ok();
}

Status infer_unsqueeze(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(infer_unsqueeze_shape(ctx));
  forward_symbolic(ctx);  // [n] <-> n
  return Status::ok();
}

Status run_unsqueeze(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(auto axes, read_int_list(ctx, *ctx.input(1), "axes"));
  SEQRT_ASSIGN_OR_RETURN(std::vector<bool> inserted,
                         inserted_dims(ctx, axes, in.rank()));
  std::vector<int64_t> dims;
  size_t next = 0;
  for (bool is_new : inserted) dims.push_back(is_new ? 1 : in.dim(next++));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, in.clone().reshaped(std::move(dims)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_unsqueeze(OpRegistry& registry) {
  OpSchema s;
  s.name = "Unsqueeze";
  s.doc = "inserts dims of size 1 at the given output axes";
  s.inputs = {{"data"}, {"axes"}};
  s.outputs = {{"expanded"}};
  s.infer = infer_unsqueeze;
  s.reference = run_unsqueeze;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
