// Slice (f32, i32, i64): a strided copy (strided_copy.h) from each axis'
// clamped start, or shaders/slice.comp when starts, axes or steps are made
// on the device.
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/strided_copy.h"

namespace seqrt::vulkan {
namespace {

// Slice with starts, axes or steps made on the device: shaders/slice.comp
// reads them while it runs.
Status record_device_slice(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  if (in.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), in.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  if (count == 0) return Status::ok();
  auto present = [&](size_t i) {
    return i < args.inputs.size() && !args.inputs[i].empty();
  };
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(count), static_cast<uint32_t>(in.size()),
      static_cast<uint32_t>(element_count(args.input_dims[1]))};
  append_padded(words, in, 1);
  append_padded(words, out, 1);
  Dispatch dispatch;
  dispatch.shader = "slice";
  dispatch.specialization = {kLocalSize, element_words(args.output_dtypes[0]),
                             args.input_dtypes[1] == DType::kI64 ? 2u : 1u,
                             present(3) ? 1u : 0u, present(4) ? 1u : 0u};
  dispatch.push_constants = words_to_bytes(words);
  // Absent axes or steps are never read; starts stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    present(3) ? args.inputs[3] : args.inputs[1],
                    present(4) ? args.inputs[4] : args.inputs[1]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

// Slice: the output walks the input from each axis' clamped start with the
// axis' step (negative steps are negative strides).
Status record_slice(const NodeArgs& args, Recorder& recorder) {
  const Graph& graph = *args.graph;
  for (size_t i : {1, 3, 4}) {
    if (i < args.node->inputs.size() && args.node->inputs[i] != kNoValue &&
        !graph.is_constant(args.node->inputs[i])) {
      return record_device_slice(args, recorder);
    }
  }
  const std::vector<int64_t>& in = args.input_dims[0];
  std::vector<int64_t> starts = constant_ints(args, 1);
  std::vector<int64_t> axes = constant_ints(args, 3);
  std::vector<int64_t> steps = constant_ints(args, 4);
  std::vector<int64_t> strides = row_major_strides(in);
  std::vector<int64_t> src_strides = strides;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t axis = static_cast<size_t>(
        i < axes.size() ? normalized_axis(axes[i], in.size()) : i);
    int64_t step = i < steps.size() ? steps[i] : 1;
    int64_t dim = in[axis];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, dim - 1);
    if (args.output_dims[0][axis] == 0) start = 0;
    base += start * strides[axis];
    src_strides[axis] = step * strides[axis];
  }
  if (element_count(args.output_dims[0]) == 0) return Status::ok();
  return strided_copy(args.inputs[0], args.outputs[0], args.output_dims[0],
                      src_strides, row_major_strides(args.output_dims[0]), base,
                      0, element_words(args.output_dtypes[0]), *args.node,
                      recorder);
}

}  // namespace

void register_slice_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Slice", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_slice(args, r);
             }});
}

}  // namespace seqrt::vulkan
