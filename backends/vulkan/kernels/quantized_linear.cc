// Weight-only quantized seqrt::Linear (quantized_linear.h): the problem's
// sizes from the node and its input dims, the GEMV/GEMM choice, and the
// dispatch, its workgroups spread over x, y and z when one dimension of the
// device's grid is too short (many output columns, or many rows).
#include "backends/vulkan/kernels/quantized_linear.h"

#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/linalg/quantized_linear.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// Rows up to which the GEMV runs (shaders/quantized_gemv.comp MAX_ROWS).
constexpr int64_t kGemvMaxRows = 8;
// Output columns per GEMV workgroup; outputs per GEMM tile side.
constexpr int64_t kGemvColumns = 8;
constexpr int64_t kTile = 64;

enum Path : uint32_t { kGemm = 0, kGemv = 1 };

struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t bits = 0, block_size = 0, n_blocks = 0, row_bytes = 0;
  uint32_t activation = 0;
  bool bias = false, zero_point = false;
};

bool present(const NodeArgs& args, size_t index) {
  return index < args.inputs.size() && !args.inputs[index].empty();
}

// The sizes, checked against the input dims (inference checked the node,
// but a graph with named dims reaches here with the bound ones).
Result<Problem> quantized_problem(const NodeArgs& args) {
  const Node& node = *args.node;
  Problem q;
  q.bits = node_attr_int(node, "bits");
  q.k = node_attr_int(node, "K");
  q.block_size = node_attr_int(node, "block_size");
  SEQRT_ASSIGN_OR_RETURN(q.activation, linear_activation_code(node));
  const std::vector<int64_t>& x = args.input_dims[kLinearX];
  const std::vector<int64_t>& w = args.input_dims[kLinearW];
  if (q.k < 1 || q.block_size < 1 || x.empty() || x.back() != q.k ||
      w.size() != 2) {
    return invalid_argument(
        "{}: X must end in K = {} and W be (N, ceil(K*bits/8))", node.label(),
        q.k);
  }
  q.n = w[0];
  q.m = element_count(x) / q.k;
  q.n_blocks = (q.k + q.block_size - 1) / q.block_size;
  q.row_bytes = quantized_row_bytes(q.k, q.bits);
  const std::vector<int64_t> blocks = {q.n, q.n_blocks};
  q.bias = present(args, kLinearB);
  q.zero_point = present(args, kLinearWZeroPoint);
  if (w[1] != q.row_bytes || args.input_dims[kLinearWScale] != blocks ||
      (q.zero_point && args.input_dims[kLinearWZeroPoint] != blocks) ||
      (q.bias && args.input_dims[kLinearB] != std::vector<int64_t>{q.n})) {
    return invalid_argument(
        "{}: W must be ({}, {}), W_scale and W_zero_point ({}, {}), B ({})",
        node.label(), q.n, q.row_bytes, q.n, q.n_blocks, q.n);
  }
  return q;
}

int64_t group_count(const Problem& q, uint32_t path) {
  if (path == kGemv) return (q.n + kGemvColumns - 1) / kGemvColumns;
  return ((q.n + kTile - 1) / kTile) * ((q.m + kTile - 1) / kTile);
}

// `count` workgroups over x, then y, then z (the shaders' group_index()
// undoes it); kLimitExceeded when even that grid is too small.
Result<std::array<uint32_t, 3>> spread_groups(int64_t count,
                                              const DeviceLimits& limits,
                                              const Node& node) {
  std::array<int64_t, 3> max{};
  for (int d = 0; d < 3; ++d) {
    max[d] = limits.max_group_count[d] == 0 ? 65535 : limits.max_group_count[d];
  }
  const int64_t gx = std::min(count, max[0]);
  const int64_t gy = std::min((count + gx - 1) / gx, max[1]);
  const int64_t gz = (count + gx * gy - 1) / (gx * gy);
  if (gz > max[2]) {
    return make_error(StatusCode::kLimitExceeded,
                      "{} (vulkan): {} workgroups exceed the device's grid of "
                      "{}x{}x{}",
                      node.label(), count, max[0], max[1], max[2]);
  }
  return std::array<uint32_t, 3>{static_cast<uint32_t>(gx),
                                 static_cast<uint32_t>(gy),
                                 static_cast<uint32_t>(gz)};
}

uint32_t log2_exact(int64_t power_of_two) {
  uint32_t shift = 0;
  while ((int64_t{1} << shift) < power_of_two) ++shift;
  return shift;
}

}  // namespace

Result<uint32_t> linear_activation_code(const Node& node) {
  const std::string& name = node_attr_string(node, "activation");
  static const std::vector<std::string> codes = {
      "none", "relu", "gelu", "gelu_tanh", "sigmoid", "silu"};
  auto found = std::find(codes.begin(), codes.end(), name);
  if (found == codes.end()) {
    return invalid_argument("{}: unknown activation '{}'", node.label(), name);
  }
  return static_cast<uint32_t>(found - codes.begin());
}

Status supports_quantized_linear(const Graph& graph, const Node& node) {
  const int64_t bits = node_attr_int(node, "bits");
  if (bits != 4 && bits != 8) {
    return unsupported(
        "{}: weight-only quantized Linear takes bits 4 or 8 on Vulkan, not {}",
        node.label(), bits);
  }
  if (node_attr_int(node, "activation_bits") != 0) {
    return unsupported(
        "{}: int8 activations (activation_bits 8) run on the CPU; Vulkan's "
        "quantized Linear keeps X in f32",
        node.label());
  }
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, kLinearX, DType::kF32));
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, kLinearB, DType::kF32));
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, kLinearW, DType::kU8));
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, kLinearWScale, DType::kF32));
  SEQRT_RETURN_IF_ERROR(
      require_input(graph, node, kLinearWZeroPoint, DType::kU8));
  return require_outputs(graph, node, DType::kF32);
}

Result<KernelTiling> plan_quantized_linear(const NodeArgs& args,
                                           const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(Problem q, quantized_problem(args));
  KernelTiling tiling;
  tiling.shared_limit = limits.shared_memory_bytes;
  const std::string weights =
      fmt::format("int{} weights, blocks of {}", q.bits, q.block_size);
  // The GEMV makes 8 columns a workgroup, the GEMM 64: past the device's
  // grid the GEMM may still fit.
  int64_t grid = 1;
  for (uint32_t d : limits.max_group_count) grid *= d == 0 ? 65535 : d;
  if (limits.gemv && q.m <= kGemvMaxRows &&
      (group_count(q, kGemv) <= grid || group_count(q, kGemm) > grid)) {
    tiling.summary = fmt::format(
        "quantized GEMV: {} row(s), {} columns per workgroup, 32 partial "
        "sums each, {}",
        q.m, kGemvColumns, weights);
    tiling.shared_bytes =
        static_cast<uint32_t>(256 * 4 * std::max<int64_t>(q.m, 1));
    tiling.constants = {kGemv};
  } else {
    tiling.summary = fmt::format(
        "quantized GEMM: 64x64 outputs per workgroup, K in steps of 16 "
        "dequantised into shared memory, {}",
        weights);
    tiling.shared_bytes = 2 * 16 * 64 * 4;
    tiling.constants = {kGemm};
  }
  return tiling;
}

Status record_quantized_linear(const NodeArgs& args, const KernelTiling& tiling,
                               Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(Problem q, quantized_problem(args));
  if (q.m == 0 || q.n == 0) return Status::ok();
  const uint32_t path = tiling.constants.at(0);
  Dispatch dispatch;
  dispatch.shader = path == kGemv ? "quantized_gemv" : "quantized_gemm";
  dispatch.specialization = {q.bias ? 1u : 0u, q.activation,
                             static_cast<uint32_t>(q.bits),
                             q.zero_point ? 1u : 0u};
  if (path == kGemv) {
    dispatch.specialization.push_back(static_cast<uint32_t>(q.m));
  }
  dispatch.push_constants = push_bytes(
      {static_cast<uint32_t>(q.m), static_cast<uint32_t>(q.n),
       static_cast<uint32_t>(q.k), static_cast<uint32_t>(q.row_bytes),
       static_cast<uint32_t>(q.n_blocks), log2_exact(q.block_size)});
  // Absent bias and zero points are never read; other inputs stand in.
  const BufferSlice& x = args.inputs[kLinearX];
  const BufferSlice& scale = args.inputs[kLinearWScale];
  dispatch.reads = {x, args.inputs[kLinearW],
                    q.bias ? args.inputs[kLinearB] : x, scale,
                    q.zero_point ? args.inputs[kLinearWZeroPoint] : scale};
  dispatch.writes = {args.outputs[0]};
  SEQRT_ASSIGN_OR_RETURN(
      dispatch.groups,
      spread_groups(group_count(q, path), recorder.limits(), *args.node));
  return recorder.dispatch(dispatch);
}

}  // namespace seqrt::vulkan
