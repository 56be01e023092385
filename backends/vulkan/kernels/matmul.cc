// MatMul (batched, broadcast batch dims, 1-D operands), Gemm (transposes,
// alpha/beta, C broadcast) and seqrt::Linear (bias and activation) through
// one tiled fp32 GEMM (shaders/matmul_body.glsl). Operands are read through
// strides, so transposes and broadcasts cost no copies; up to 8 rows (a
// decode step) go to the GEMV shader (gemv_body.glsl). B may be a weight
// the executable stores as fp16 (compiler/passes/half_weights.h,
// SEQRT_VULKAN_FP16_WEIGHTS), read by matmul_f16w.comp. A Linear with
// weight-only quantized W goes to quantized_linear.cc.
#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/quantized_linear.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

constexpr int64_t kTile = 64;
// Output columns per GEMV workgroup (shaders/gemv_body.glsl), by K_INNER.
constexpr int64_t kGemvColumns = 32;
constexpr int64_t kGemvColumnsKInner = 8;
// Most rows the GEMV takes (shaders/gemv_body.glsl MAX_ROWS).
constexpr int64_t kGemvMaxRows = 8;
constexpr int kMaxBatchRank = 4;

// One GEMM problem as the shader's push constants see it.
struct Gemm {
  int64_t m = 1, n = 1, k = 1;
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0, c_n = 0;
  float alpha = 1.0f, beta = 0.0f;
  uint32_t activation = 0;  // shaders/gemm_common.glsl ACT
  std::vector<int64_t> batch_dims, a_batch, b_batch;
  BufferSlice bias;  // empty: none
};

// KernelTiling::constants of a product: the path and GEMV's K_INNER.
enum Path : uint32_t { kTiledGemm = 0, kGemv = 1 };

// The tiled GEMM, or for a few rows the GEMV, under the device's limits.
KernelTiling plan_gemm(const Gemm& g, const DeviceLimits& limits) {
  // K_INNER when B's k is the adjacent dimension (Gemm transB), so that
  // neighbouring invocations read neighbouring values.
  const uint32_t k_inner = g.b_k == 1 && (g.b_n != 1 || g.n == 1) ? 1 : 0;
  const int64_t columns = k_inner ? kGemvColumnsKInner : kGemvColumns;
  const int64_t groups = (g.n + columns - 1) / columns;
  KernelTiling tiling;
  tiling.shared_limit = limits.shared_memory_bytes;
  if (limits.gemv && g.m >= 1 && g.m <= kGemvMaxRows &&
      groups <= limits.max_group_count[0]) {
    tiling.summary = fmt::format(
        "GEMV: {} row(s), {} columns per workgroup, {} partial sums each", g.m,
        columns, 256 / columns);
    tiling.shared_bytes = static_cast<uint32_t>(256 * 4 * g.m);
    tiling.constants = {kGemv, k_inner};
  } else {
    tiling.summary =
        "tiled GEMM: 64x64 outputs per workgroup, K in steps "
        "of 16";
    tiling.shared_bytes = 2 * 16 * 64 * 4;
    tiling.constants = {kTiledGemm, 0};
  }
  return tiling;
}

Status record_gemm(const Gemm& g, const NodeArgs& args,
                   const KernelTiling& tiling, Recorder& recorder) {
  if (g.batch_dims.size() > kMaxBatchRank) {
    return unsupported("{}: {} batch dims; the Vulkan MatMul takes at most {}",
                       args.node->label(), g.batch_dims.size(), kMaxBatchRank);
  }
  std::vector<uint32_t> words;
  for (int64_t v : {g.m, g.n, g.k, g.a_m, g.a_k, g.b_k, g.b_n, g.c_m, g.c_n}) {
    words.push_back(static_cast<uint32_t>(v));
  }
  words.push_back(float_word(g.alpha));
  words.push_back(float_word(g.beta));
  words.push_back(static_cast<uint32_t>(g.batch_dims.size()));
  for (const auto* list : {&g.batch_dims, &g.a_batch, &g.b_batch}) {
    for (int i = 0; i < kMaxBatchRank; ++i) {
      words.push_back(i < static_cast<int>(list->size())
                          ? static_cast<uint32_t>((*list)[i])
                          : 1);
    }
  }
  const bool half = args.input_dtypes[1] == DType::kF16;
  const bool gemv = tiling.constants.at(0) == kGemv;
  const uint32_t k_inner = tiling.constants.at(1);
  const BufferSlice& bias = g.bias;
  Dispatch dispatch;
  dispatch.shader =
      std::string(gemv ? "gemv" : "matmul") + (half ? "_f16w" : "");
  dispatch.specialization = {bias.empty() ? 0u : 1u, g.activation};
  if (gemv) {
    dispatch.specialization.push_back(k_inner);
    dispatch.specialization.push_back(static_cast<uint32_t>(g.m));
  }
  dispatch.push_constants = words_to_bytes(words);
  // Without a bias the shader's binding 2 is never read; A stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    bias.empty() ? args.inputs[0] : bias};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = {static_cast<uint32_t>((g.n + kTile - 1) / kTile),
                     static_cast<uint32_t>((g.m + kTile - 1) / kTile),
                     static_cast<uint32_t>(element_count(g.batch_dims))};
  if (gemv) {
    const int64_t columns = k_inner ? kGemvColumnsKInner : kGemvColumns;
    dispatch.groups[0] = static_cast<uint32_t>((g.n + columns - 1) / columns);
    dispatch.groups[1] = 1;
  }
  if (g.m == 0 || g.n == 0) return Status::ok();
  if (g.k == 0) return recorder.fill(args.outputs[0], 0);
  return recorder.dispatch(dispatch);
}

Result<Gemm> matmul_problem(const NodeArgs& args) {
  std::vector<int64_t> a = args.input_dims[0];
  std::vector<int64_t> b = args.input_dims[1];
  // ONNX promotes a 1-D A to (1, K) and a 1-D B to (K, 1).
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  Gemm g;
  g.m = a[a.size() - 2];
  g.k = a.back();
  g.n = b.back();
  g.a_m = g.k;
  g.a_k = 1;
  g.b_k = g.n;
  g.b_n = 1;
  std::vector<int64_t> a_batch(a.begin(), a.end() - 2);
  std::vector<int64_t> b_batch(b.begin(), b.end() - 2);
  size_t rank = std::max(a_batch.size(), b_batch.size());
  g.batch_dims.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    size_t from_end = rank - i;
    int64_t da =
        from_end <= a_batch.size() ? a_batch[a_batch.size() - from_end] : 1;
    int64_t db =
        from_end <= b_batch.size() ? b_batch[b_batch.size() - from_end] : 1;
    g.batch_dims[i] = std::max(da, db);
  }
  g.a_batch = broadcast_strides(a_batch, g.batch_dims);
  g.b_batch = broadcast_strides(b_batch, g.batch_dims);
  for (auto& s : g.a_batch) s *= g.m * g.k;
  for (auto& s : g.b_batch) s *= g.k * g.n;
  return g;
}

Result<Gemm> onnx_gemm_problem(const NodeArgs& args) {
  const Node& node = *args.node;
  const std::vector<int64_t>& a = args.input_dims[0];
  const std::vector<int64_t>& b = args.input_dims[1];
  bool trans_a = node_attr_int(node, "transA") != 0;
  bool trans_b = node_attr_int(node, "transB") != 0;
  Gemm g;
  g.m = trans_a ? a[1] : a[0];
  g.k = trans_a ? a[0] : a[1];
  g.n = trans_b ? b[0] : b[1];
  // A is stored (M, K) or, transposed, (K, M); B likewise (K, N) or (N, K).
  g.a_m = trans_a ? 1 : g.k;
  g.a_k = trans_a ? g.m : 1;
  g.b_k = trans_b ? 1 : g.n;
  g.b_n = trans_b ? g.k : 1;
  g.alpha = node_attr_float(node, "alpha");
  g.beta = node_attr_float(node, "beta");
  if (args.inputs.size() > 2 && !args.inputs[2].empty()) {
    g.bias = args.inputs[2];
    std::vector<int64_t> c = broadcast_strides(args.input_dims[2], {g.m, g.n});
    g.c_m = c[0];
    g.c_n = c[1];
  }
  return g;
}

// seqrt::Linear: X (..., K) as (M, K) times W (K, N), bias B (N) broadcast
// over rows, then the activation. (The quantized form: quantized_linear.h.)
Result<Gemm> linear_problem(const NodeArgs& args) {
  const std::vector<int64_t>& x = args.input_dims[0];
  const std::vector<int64_t>& w = args.input_dims[1];
  SEQRT_ASSIGN_OR_RETURN(uint32_t activation,
                         linear_activation_code(*args.node));
  Gemm g;
  g.k = w[0];
  g.n = w[1];
  g.m = g.k == 0 ? 0 : element_count(x) / g.k;
  g.a_m = g.k;
  g.a_k = 1;
  g.b_k = g.n;
  g.b_n = 1;
  g.beta = 1.0f;
  g.activation = activation;
  if (args.inputs.size() > 2 && !args.inputs[2].empty()) {
    g.bias = args.inputs[2];
    g.c_n = 1;
  }
  return g;
}

Status supports_f32(const Graph& graph, const Node& node, const DeviceLimits&) {
  return require_f32(graph, node);
}

// The float form here; weight-only quantized weights (bits 4/8) in
// quantized_linear.cc.
Status supports_linear(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  if (node_attr_int(node, "bits") != 0) {
    return supports_quantized_linear(graph, node);
  }
  return require_f32(graph, node);
}

bool quantized(const NodeArgs& args) {
  return node_attr_int(*args.node, "bits") != 0;
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  using Problem = Result<Gemm> (*)(const NodeArgs&);
  using Supports = Status (*)(const Graph&, const Node&, const DeviceLimits&);
  auto add = [&](const char* domain, const char* op, Problem problem,
                 Supports supports) {
    table.add({domain, op, supports,
               [problem](const NodeArgs& args,
                         const DeviceLimits& limits) -> Result<KernelTiling> {
                 SEQRT_ASSIGN_OR_RETURN(Gemm g, problem(args));
                 return plan_gemm(g, limits);
               },
               [problem](const NodeArgs& args, const KernelTiling& tiling,
                         Recorder& r) -> Status {
                 SEQRT_ASSIGN_OR_RETURN(Gemm g, problem(args));
                 return record_gemm(g, args, tiling, r);
               }});
  };
  add(kOnnxDomain, "MatMul", matmul_problem, supports_f32);
  table.add({kSeqrtDomain, "Linear", supports_linear,
             [](const NodeArgs& args,
                const DeviceLimits& limits) -> Result<KernelTiling> {
               if (quantized(args)) return plan_quantized_linear(args, limits);
               SEQRT_ASSIGN_OR_RETURN(Gemm g, linear_problem(args));
               return plan_gemm(g, limits);
             },
             [](const NodeArgs& args, const KernelTiling& tiling,
                Recorder& r) -> Status {
               if (quantized(args)) {
                 return record_quantized_linear(args, tiling, r);
               }
               SEQRT_ASSIGN_OR_RETURN(Gemm g, linear_problem(args));
               return record_gemm(g, args, tiling, r);
             }});
  add(kOnnxDomain, "Gemm", onnx_gemm_problem, supports_f32);
}

}  // namespace seqrt::vulkan
