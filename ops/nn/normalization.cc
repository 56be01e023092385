#include "ops/nn/normalization.h"

#include "ops/type_support.h"

namespace seqrt {

NormalizedRows split_rows(const std::vector<int64_t>& dims, int64_t axis) {
  NormalizedRows split{1, 1};
  for (size_t d = 0; d < dims.size(); ++d) {
    (static_cast<int64_t>(d) < axis ? split.rows : split.cols) *= dims[d];
  }
  return split;
}

Status check_broadcast_to(const OpContext& ctx, const std::string& what,
                          const Shape& from, const Shape& to) {
  bool ok = from.rank() <= to.rank();
  for (size_t i = 0; ok && i < from.rank(); ++i) {
    const Dim& f = from[from.rank() - 1 - i];
    const Dim& t = to[to.rank() - 1 - i];
    if (f.is_fixed() && t.is_fixed() && f.value() != 1 && f != t) ok = false;
  }
  if (ok) return Status::ok();
  return ctx.error("{} has shape {}, which does not broadcast to X's {}", what,
                   from.to_string(), to.to_string());
}

Result<DType> stash_dtype(const OpContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(
      DType dtype,
      dtype_from_onnx_code(ctx, "stash_type", ctx.attr_int("stash_type")));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "stash_type", dtype, kFloatTypes));
  return dtype;
}

}  // namespace seqrt
