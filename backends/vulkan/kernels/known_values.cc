// Ops whose outputs are known while recording: Shape and Size (from the
// planned dims) and Constant (from its attribute). Their bytes are written
// into the output with buffer fills, one 32-bit word each, so only small
// values are taken (shape arithmetic, scalars, short tables).
#include <cstring>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// Constants up to this size are filled word by word.
constexpr size_t kMaxFilledBytes = 4096;

Status fill_bytes(const BufferSlice& out, const void* data, size_t bytes,
                  Recorder& recorder) {
  for (size_t at = 0; at < bytes; at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, static_cast<const uint8_t*>(data) + at,
                std::min<size_t>(4, bytes - at));
    BufferSlice slice = out;
    slice.offset += at;
    slice.bytes = 4;
    SEQRT_RETURN_IF_ERROR(recorder.fill(slice, word));
  }
  return Status::ok();
}

Status fill_i64s(const BufferSlice& out, const std::vector<int64_t>& values,
                 Recorder& recorder) {
  return fill_bytes(out, values.data(), values.size() * sizeof(int64_t),
                    recorder);
}

Status record_shape(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& dims = args.input_dims[0];
  int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::max<int64_t>(0, std::min(v, rank));
  };
  int64_t start = clamp(node_attr_int(*args.node, "start"));
  // "end" has no schema default: absent, the slice runs to the rank.
  const Attribute* end_attr = args.node->attr("end");
  int64_t end = clamp(end_attr != nullptr ? end_attr->as_int() : rank);
  std::vector<int64_t> values;
  for (int64_t d = start; d < end; ++d) values.push_back(dims[d]);
  return fill_i64s(args.outputs[0], values, recorder);
}

Status record_size(const NodeArgs& args, Recorder& recorder) {
  return fill_i64s(args.outputs[0], {element_count(args.input_dims[0])},
                   recorder);
}

// The attribute that holds the Constant's value, as bytes.
std::vector<uint8_t> constant_bytes(const Node& node) {
  auto bytes_of = [](const void* data, size_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    return std::vector<uint8_t>(p, p + size);
  };
  if (const Attribute* a = node.attr("value")) {
    return bytes_of(a->as_tensor().data(), a->as_tensor().byte_size());
  }
  if (const Attribute* a = node.attr("value_float")) {
    float v = a->as_float();
    return bytes_of(&v, sizeof(v));
  }
  if (const Attribute* a = node.attr("value_int")) {
    int64_t v = a->as_int();
    return bytes_of(&v, sizeof(v));
  }
  if (const Attribute* a = node.attr("value_floats")) {
    return bytes_of(a->as_floats().data(), a->as_floats().size() * 4);
  }
  if (const Attribute* a = node.attr("value_ints")) {
    return bytes_of(a->as_ints().data(), a->as_ints().size() * 8);
  }
  return {};
}

Status record_constant(const NodeArgs& args, Recorder& recorder) {
  std::vector<uint8_t> bytes = constant_bytes(*args.node);
  return fill_bytes(args.outputs[0], bytes.data(), bytes.size(), recorder);
}

Status supports_constant(const Graph&, const Node& node, const DeviceLimits&) {
  for (const char* name : {"value_string", "value_strings"}) {
    if (node.attr(name) != nullptr) {
      return unsupported("{}: string constants have no Vulkan form",
                         node.label());
    }
  }
  size_t bytes = constant_bytes(node).size();
  if (bytes > kMaxFilledBytes) {
    return unsupported(
        "{}: a {}-byte Constant node; the Vulkan backend fills at most {} "
        "bytes (fold constants before compiling)",
        node.label(), bytes, kMaxFilledBytes);
  }
  return Status::ok();
}

Status supports_any(const Graph&, const Node&, const DeviceLimits&) {
  return Status::ok();
}

}  // namespace

void register_known_values_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Shape", supports_any, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_shape(args, r);
             }});
  table.add({kOnnxDomain, "Size", supports_any, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_size(args, r);
             }});
  table.add({kOnnxDomain, "Constant", supports_constant, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_constant(args, r);
             }});
}

}  // namespace seqrt::vulkan
