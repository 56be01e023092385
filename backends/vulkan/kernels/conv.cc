// Conv in fp32, 1-D and 2-D, grouped and depthwise, with explicit pads or
// auto_pad (shaders/conv.comp, one invocation per output element).
#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

std::vector<int64_t> ints_attr(const Node& node, const char* name,
                               std::vector<int64_t> fallback) {
  const Attribute* attr = node.attr(name);
  return attr == nullptr || attr->as_ints().empty() ? fallback
                                                    : attr->as_ints();
}

// The padding before each spatial dim: explicit pads, or what auto_pad's
// SAME_* needs to reach the output size.
std::vector<int64_t> pads_before(const Node& node,
                                 const std::vector<int64_t>& in,
                                 const std::vector<int64_t>& out,
                                 const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& dilations) {
  size_t spatial = kernel.size();
  const std::string& mode = node_attr_string(node, "auto_pad");
  std::vector<int64_t> before(spatial, 0);
  if (mode == "NOTSET") {
    std::vector<int64_t> pads = ints_attr(node, "pads", {});
    for (size_t d = 0; d < spatial && d < pads.size(); ++d) before[d] = pads[d];
  } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    for (size_t d = 0; d < spatial; ++d) {
      int64_t total =
          std::max<int64_t>(0, (out[d] - 1) * strides[d] +
                                   (kernel[d] - 1) * dilations[d] + 1 - in[d]);
      before[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
  }
  return before;
}

Status record_conv(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& x = args.input_dims[0];
  const std::vector<int64_t>& w = args.input_dims[1];
  const std::vector<int64_t>& y = args.output_dims[0];
  size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  std::vector<int64_t> strides =
      ints_attr(node, "strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations =
      ints_attr(node, "dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> in(x.begin() + 2, x.end());
  std::vector<int64_t> out(y.begin() + 2, y.end());
  std::vector<int64_t> before =
      pads_before(node, in, out, kernel, strides, dilations);
  // 1-D is 2-D with a height of 1.
  if (spatial == 1) {
    for (auto* v : {&kernel, &strides, &dilations, &in, &out, &before}) {
      v->insert(v->begin(), v == &before ? 0 : 1);
    }
  }
  int64_t count = element_count(y);
  bool has_bias = args.inputs.size() > 2 && !args.inputs[2].empty();
  std::vector<uint32_t> words;
  for (int64_t v :
       {count, x[1], w[0], node_attr_int(node, "group"), in[0], in[1], out[0],
        out[1], kernel[0], kernel[1], strides[0], strides[1], dilations[0],
        dilations[1], before[0], before[1]}) {
    words.push_back(static_cast<uint32_t>(v));
  }
  Dispatch dispatch;
  dispatch.shader = "conv";
  dispatch.specialization = {kLocalSize, has_bias ? 1u : 0u};
  dispatch.push_constants = words_to_bytes(words);
  // Without a bias the shader's binding 2 is never read; X stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    has_bias ? args.inputs[2] : args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_conv(const Graph& graph, const Node& node,
                     const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_f32(graph, node));
  const Value& x = graph.value(node.inputs[0]);
  if (!x.shape || (x.shape->rank() != 3 && x.shape->rank() != 4)) {
    return unsupported("{}: the Vulkan Conv takes 1-D and 2-D convolutions",
                       node.label());
  }
  return Status::ok();
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Conv", supports_conv, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_conv(args, r);
             }});
}

}  // namespace seqrt::vulkan
