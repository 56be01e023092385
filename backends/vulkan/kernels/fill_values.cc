#include "backends/vulkan/kernels/fill_values.h"

namespace seqrt::vulkan {

std::array<uint32_t, 2> value_words(const Tensor& value, DType dtype) {
  if (dtype == DType::kF32) {
    return {float_word(static_cast<float>(value.element_f64(0))), 0};
  }
  int64_t v = value.element_i64(0);
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

Status record_sequence(const BufferSlice& out, DType dtype, int64_t count,
                       std::array<uint32_t, 2> start, uint32_t delta,
                       Recorder& recorder) {
  Dispatch dispatch;
  dispatch.shader = "range";
  dispatch.specialization = {kLocalSize,
                             static_cast<uint32_t>(dtype_code(dtype))};
  dispatch.push_constants =
      push_bytes({static_cast<uint32_t>(count), start[0], start[1], delta});
  dispatch.writes = {out};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

}  // namespace seqrt::vulkan
