// The comparisons Equal, Less, Greater, LessOrEqual and GreaterOrEqual
// (f32, i32, i64 into bool, numpy broadcasting; shaders/compare.comp).
#include <map>
#include <string>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

// Op codes of shaders/compare.comp.
const std::map<std::string, uint32_t> kCompareOps = {{"Equal", 0},
                                                     {"Less", 1},
                                                     {"Greater", 2},
                                                     {"LessOrEqual", 3},
                                                     {"GreaterOrEqual", 4}};

Status record_compare(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(require_output_rank_fits(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, broadcast_strides(args.input_dims[0], out), 0);
  append_padded(words, broadcast_strides(args.input_dims[1], out), 0);
  Dispatch dispatch;
  dispatch.shader = "compare";
  dispatch.specialization = {
      kLocalSize, code,
      static_cast<uint32_t>(dtype_code(args.input_dtypes[0]))};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0]};
  // One invocation per output word of 4 bools.
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_compare(const Graph& graph, const Node& node,
                        const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_outputs(graph, node, DType::kBool));
  return require_dtype_in(graph, node, node.inputs[0],
                          {DType::kF32, DType::kI32, DType::kI64});
}

}  // namespace

void register_compare_kernels(KernelTable& table) {
  for (const auto& [op, code] : kCompareOps) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_compare, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_compare(c, args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
