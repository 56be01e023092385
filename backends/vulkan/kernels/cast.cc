// Cast and CastLike between f32, i32, i64, bool and f16 (shaders/cast.comp).
// Bools are bytes and halves 2 bytes, read out of and written as whole
// 32-bit words.
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

// shaders/cast.comp's dtype codes: dtype_code's, and 4 for f16.
uint32_t cast_code(DType dtype) {
  return dtype == DType::kF16 ? 4u : static_cast<uint32_t>(dtype_code(dtype));
}

Status record_cast(const NodeArgs& args, Recorder& recorder) {
  int64_t count = element_count(args.output_dims[0]);
  uint32_t to = cast_code(args.output_dtypes[0]);
  // Bools are written 4 to a word, halves 2.
  int64_t per_word = to == 3 ? 4 : to == 4 ? 2 : 1;
  Dispatch dispatch;
  dispatch.shader = "cast";
  dispatch.specialization = {kLocalSize, cast_code(args.input_dtypes[0]), to};
  dispatch.push_constants = push_bytes({static_cast<uint32_t>(count)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups =
      groups_for((count + per_word - 1) / per_word, recorder.limits());
  if (count == 0) return Status::ok();
  return recorder.dispatch(dispatch);
}

Status supports_cast(const Graph& graph, const Node& node,
                     const DeviceLimits&) {
  std::initializer_list<DType> allowed = {DType::kF32, DType::kI32, DType::kI64,
                                          DType::kBool, DType::kF16};
  SEQRT_RETURN_IF_ERROR(require_dtype_in(graph, node, node.inputs[0], allowed));
  return require_dtype_in(graph, node, node.outputs[0], allowed);
}

}  // namespace

void register_cast_kernels(KernelTable& table) {
  // CastLike takes its target dtype from input 1, which it never reads.
  for (const char* op : {"Cast", "CastLike"}) {
    table.add({kOnnxDomain, op, supports_cast, nullptr,
               [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_cast(args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
