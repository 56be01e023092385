// MatMul (batched, broadcast batch dims, 1-D operands), Gemm (transposes,
// alpha/beta, C broadcast) and seqrt::Linear (bias and activation) through
// one tiled fp32 GEMM (shaders/matmul_body.glsl). Operands are read through
// strides, so transposes and broadcasts cost no copies. B may be a weight
// the executable stores as fp16 (graph/passes/half_weights.h,
// SEQRT_VULKAN_FP16_WEIGHTS), read by matmul_f16w.comp.
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

constexpr int64_t kTile = 64;
constexpr int kMaxBatchRank = 4;

// One GEMM problem as the shader's push constants see it.
struct Gemm {
  int64_t m = 1, n = 1, k = 1;
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0, c_n = 0;
  float alpha = 1.0f, beta = 0.0f;
  uint32_t activation = 0;  // shaders/matmul.comp ACT
  std::vector<int64_t> batch_dims, a_batch, b_batch;
};

Status record_gemm(const Gemm& g, const NodeArgs& args, const BufferSlice& bias,
                   Recorder& recorder) {
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
  Dispatch dispatch;
  dispatch.shader =
      args.input_dtypes[1] == DType::kF16 ? "matmul_f16w" : "matmul";
  dispatch.specialization = {bias.empty() ? 0u : 1u, g.activation};
  dispatch.push_constants = words_to_bytes(words);
  // Without a bias the shader's binding 2 is never read; A stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    bias.empty() ? args.inputs[0] : bias};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = {static_cast<uint32_t>((g.n + kTile - 1) / kTile),
                     static_cast<uint32_t>((g.m + kTile - 1) / kTile),
                     static_cast<uint32_t>(element_count(g.batch_dims))};
  if (g.m == 0 || g.n == 0) return Status::ok();
  if (g.k == 0) return recorder.fill(args.outputs[0], 0);
  return recorder.dispatch(dispatch);
}

Status record_matmul(const NodeArgs& args, Recorder& recorder) {
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
  return record_gemm(g, args, BufferSlice{}, recorder);
}

Status record_onnx_gemm(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& a = args.input_dims[0];
  const std::vector<int64_t>& b = args.input_dims[1];
  bool trans_a = int_attr(node, "transA", 0) != 0;
  bool trans_b = int_attr(node, "transB", 0) != 0;
  Gemm g;
  g.m = trans_a ? a[1] : a[0];
  g.k = trans_a ? a[0] : a[1];
  g.n = trans_b ? b[0] : b[1];
  // A is stored (M, K) or, transposed, (K, M); B likewise (K, N) or (N, K).
  g.a_m = trans_a ? 1 : g.k;
  g.a_k = trans_a ? g.m : 1;
  g.b_k = trans_b ? 1 : g.n;
  g.b_n = trans_b ? g.k : 1;
  g.alpha = float_attr(node, "alpha", 1.0f);
  g.beta = float_attr(node, "beta", 1.0f);
  BufferSlice bias;
  if (args.inputs.size() > 2 && !args.inputs[2].empty()) {
    bias = args.inputs[2];
    std::vector<int64_t> c = broadcast_strides(args.input_dims[2], {g.m, g.n});
    g.c_m = c[0];
    g.c_n = c[1];
  }
  return record_gemm(g, args, bias, recorder);
}

// seqrt::Linear: X (..., K) as (M, K) times W (K, N), bias B (N) broadcast
// over rows, then the activation.
Status record_linear(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& x = args.input_dims[0];
  const std::vector<int64_t>& w = args.input_dims[1];
  const Attribute* act = args.node->attr("activation");
  std::string name = act == nullptr ? "none" : act->as_string();
  const std::vector<std::string> codes = {"none",      "relu",    "gelu",
                                          "gelu_tanh", "sigmoid", "silu"};
  auto found = std::find(codes.begin(), codes.end(), name);
  if (found == codes.end()) {
    return invalid_argument("{}: unknown activation '{}'", args.node->label(),
                            name);
  }
  Gemm g;
  g.k = w[0];
  g.n = w[1];
  g.m = g.k == 0 ? 0 : element_count(x) / g.k;
  g.a_m = g.k;
  g.a_k = 1;
  g.b_k = g.n;
  g.b_n = 1;
  g.beta = 1.0f;
  g.activation = static_cast<uint32_t>(found - codes.begin());
  BufferSlice bias;
  if (args.inputs.size() > 2 && !args.inputs[2].empty()) {
    bias = args.inputs[2];
    g.c_n = 1;
  }
  return record_gemm(g, args, bias, recorder);
}

Status supports_f32(const Graph& graph, const Node& node, const DeviceLimits&) {
  return require_f32(graph, node);
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "MatMul", supports_f32, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_matmul(args, r);
             }});
  table.add({kSeqrtDomain, "Linear", supports_f32, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_linear(args, r);
             }});
  table.add({kOnnxDomain, "Gemm", supports_f32, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_onnx_gemm(args, r);
             }});
}

}  // namespace seqrt::vulkan
