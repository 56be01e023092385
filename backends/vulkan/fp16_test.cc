// fp16 on the Vulkan backend. Weights stored as fp16 on the device
// (VulkanOptions::fp16_weights): the products match the reference run with
// the same fp16-rounded weights, the upload shrinks by half the weights'
// bytes, and a device without 16-bit storage refuses the option. Cast to
// and from f16 rounds as the reference does, bit for bit.
#include <cmath>
#include <limits>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

// More rows than the GEMV takes: the tiled GEMM's fp16 variant
// (gemv_test.cc covers the GEMV's).
constexpr int64_t kRows = 20, kIn = 40, kHidden = 70, kOut = 24;

// Each fp32 weight rounded through fp16, as the device stores it.
Tensor rounded_to_f16(const Tensor& weight) {
  Tensor out = Tensor::allocate(DType::kF32, weight.dims()).value();
  for (int64_t i = 0; i < weight.num_elements(); ++i) {
    out.mutable_data_as<float>()[i] =
        f16_to_f32(f32_to_f16(weight.data_as<float>()[i]));
  }
  return out;
}

// x (rows, in) -> MatMul w1 -> Gemm with w2 transposed and bias c ->
// Linear w3 + b3 with GELU. `round` stores the weights pre-rounded.
Graph products(bool round) {
  auto weight = [&](std::vector<int64_t> dims, uint32_t seed) {
    Tensor w = random_uniform_f32(dims, seed, -0.2f, 0.2f);
    return round ? rounded_to_f16(w) : w;
  };
  GraphBuilder b("products");
  ValueId x = b.input("x", DType::kF32, Shape{kRows, kIn});
  ValueId h = b.add("MatMul", {x, b.constant("w1", weight({kIn, kHidden}, 1))});
  ValueId g = b.add("Gemm",
                    {h, b.constant("w2", weight({kHidden, kHidden}, 2)),
                     b.constant("c", random_uniform_f32({kHidden}, 3))},
                    {{"transB", int64_t{1}}});
  NodeOptions seqrt_op;
  seqrt_op.domain = kSeqrtDomain;
  ValueId y = b.add("Linear",
                    {g, b.constant("w3", weight({kHidden, kOut}, 4)),
                     b.constant("b3", random_uniform_f32({kOut}, 5))},
                    {{"activation", std::string("gelu")}}, seqrt_op);
  b.output(y, "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

uint64_t uploaded_at_compile(Executable& executable) {
  return dynamic_cast<VulkanExecutable&>(executable).transfers().to_device;
}

TEST(VulkanFp16Weights, MatchTheReferenceWithRoundedWeights) {
  VulkanOptions options;
  options.fp16_weights = true;
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  auto compiled = backend->compile(products(false), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference =
      create_reference_backend()->compile(products(true), CompileOptions{});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  testing::expect_first_outputs_close(**reference, **compiled,
                                      {random_uniform_f32({kRows, kIn}, 6)},
                                      1e-4, 1e-4);
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0) << fmt::format(
      "{}", fmt::join(device_of(*backend)->validation_log(), "\n"));
}

TEST(VulkanFp16Weights, UploadHalfTheWeightBytes) {
  SEQRT_OPEN_VULKAN_OR_SKIP(fp32_backend);
  VulkanOptions options;
  options.fp16_weights = true;
  SEQRT_OPEN_VULKAN_OR_SKIP(fp16_backend, options);
  auto fp32 = fp32_backend->compile(products(false), CompileOptions{});
  auto fp16 = fp16_backend->compile(products(false), CompileOptions{});
  ASSERT_TRUE(fp32.is_ok()) << fp32.status().to_string();
  ASSERT_TRUE(fp16.is_ok()) << fp16.status().to_string();
  const uint64_t weight_bytes =
      4 * (kIn * kHidden + kHidden * kHidden + kHidden * kOut);
  // The biases stay fp32; each weight element goes from 4 bytes to 2.
  EXPECT_EQ(uploaded_at_compile(**fp32) - uploaded_at_compile(**fp16),
            weight_bytes / 2);
}

TEST(VulkanFp16Weights, NeedSixteenBitStorage) {
  VulkanOptions options;
  options.fp16_weights = true;
  options.disable_fp16_storage = true;
  testing::use_lavapipe_with_validation();
  Result<std::unique_ptr<Backend>> backend = create_vulkan_backend(options);
  if (backend.is_ok()) FAIL() << "opened without 16-bit storage";
  if (device_skip::may_skip_for_no_device("vulkan", backend.status())) {
    GTEST_SKIP() << backend.status().to_string();
  }
  EXPECT_NE(backend.status().message().find("storageBuffer16BitAccess"),
            std::string::npos)
      << backend.status().to_string();
  EXPECT_NE(backend.status().message().find("SEQRT_VULKAN_FP16_WEIGHTS"),
            std::string::npos);
}

// Ties, subnormals, overflow, infinities and NaN through f32 -> f16 -> f32.
TEST(VulkanFp16Cast, RoundsLikeTheReference) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {
      0.0f,
      -0.0f,
      1.0f,
      -2.5f,
      65504.0f,
      65519.0f,
      65520.0f,
      1e6f,
      -1e6f,
      inf,
      -inf,
      std::numeric_limits<float>::quiet_NaN(),
      1.0f + 1.0f / 2048,  // a tie between 1 and the next half: to even
      1.0f + 3.0f / 2048,  // a tie rounding up
      5.9604645e-8f,       // the smallest subnormal half
      2.9802322e-8f,       // half of it: a tie to zero
      4.4703484e-8f,       // 0.75 of it: up
      6.1035156e-5f,       // the smallest normal half
      6.0975552e-5f,       // just under it: a subnormal
      1e-9f,
      3.14159265f,
      -0.1f,
      1234.5678f};
  const int64_t n = static_cast<int64_t>(values.size());
  GraphBuilder b("cast_f16");
  ValueId x = b.input("x", DType::kF32, Shape{n});
  ValueId h = b.add("Cast", {x}, {{"to", int64_t{10}}});  // FLOAT16
  b.output(h, "h");
  b.output(b.add("Cast", {h}, {{"to", int64_t{1}}}), "y");  // FLOAT
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  std::vector<Tensor> want, got;
  testing::run_with_reference(
      *backend, graph, {Tensor::from_vector<float>({n}, values)}, want, got);
  ASSERT_EQ(got.size(), 2u);
  const auto* want_h = static_cast<const uint16_t*>(want[0].data());
  const auto* got_h = static_cast<const uint16_t*>(got[0].data());
  const auto* want_y = static_cast<const uint32_t*>(want[1].data());
  const auto* got_y = static_cast<const uint32_t*>(got[1].data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(got_h[i], want_h[i]) << "f16 bits of " << values[i];
    EXPECT_EQ(got_y[i], want_y[i]) << "f32 bits back from " << values[i];
  }
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0);
}

}  // namespace
}  // namespace seqrt::vulkan
