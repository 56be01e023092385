#include "ops/elementwise/elementwise.h"

namespace seqrt {

Result<std::optional<Shape>> infer_broadcast_shape(const InferContext& ctx) {
  std::vector<std::optional<Shape>> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) shapes.push_back(ctx.input_shape(i));
  }
  // Unbroadcastable fixed dims are an error even when another rank is
  // unknown, so check the known shapes on their own first.
  std::vector<std::optional<Shape>> known;
  for (const auto& shape : shapes) {
    if (shape.has_value()) known.push_back(shape);
  }
  SEQRT_RETURN_IF_ERROR(broadcast_all(ctx, known).status());
  return broadcast_all(ctx, shapes);
}

Result<BroadcastLoop> BroadcastLoop::create(const KernelContext& ctx) {
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      return ctx.error("input {} is missing", i);
    }
    input_dims.push_back(ctx.input(i)->dims());
    SEQRT_ASSIGN_OR_RETURN(out_dims,
                           broadcast_dims(ctx, out_dims, input_dims.back()));
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(out_dims));
  return BroadcastLoop(std::move(out_dims), count, input_dims);
}

}  // namespace seqrt
