// IsNaN and IsInf (f32 into bool; shaders/float_class.comp). f16 models
// reach them widened to f32, which keeps every NaN and infinity.
#include <utility>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// IsNaN (code 0) and IsInf (code 1) by shaders/float_class.comp.
Status record_float_class(uint32_t code, const NodeArgs& args,
                          Recorder& recorder) {
  const int64_t count = element_count(args.output_dims[0]);
  const Node& node = *args.node;
  // The signs IsInf detects; IsNaN has no such attributes (the shader's
  // IsNaN code ignores them).
  const bool is_inf = code == 1;
  const bool negative = is_inf && node_attr_int(node, "detect_negative") != 0;
  const bool positive = is_inf && node_attr_int(node, "detect_positive") != 0;
  Dispatch dispatch;
  dispatch.shader = "float_class";
  dispatch.specialization = {kLocalSize, code};
  dispatch.push_constants =
      push_bytes({static_cast<uint32_t>(count), static_cast<uint32_t>(negative),
                  static_cast<uint32_t>(positive)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  if (count == 0) return Status::ok();
  return recorder.dispatch(dispatch);
}

Status supports_float_class(const Graph& graph, const Node& node,
                            const DeviceLimits&) {
  return require_input(graph, node, 0, DType::kF32);
}

}  // namespace

void register_float_class_kernels(KernelTable& table) {
  const std::pair<const char*, uint32_t> float_classes[] = {{"IsNaN", 0},
                                                            {"IsInf", 1}};
  for (const auto& [op, code] : float_classes) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_float_class, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_float_class(c, args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
