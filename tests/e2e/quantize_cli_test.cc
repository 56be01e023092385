// seqrt quantize: the tiny MLP sample's hidden matmuls become 4- or 8-bit,
// the output layer stays f32 unless asked, the file it writes runs and
// stays close to the f32 model (and runs on Vulkan as on the CPU), and bad
// flags are one-line errors.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "importers/tensor/npy.h"
#include "runtime/backend_registry.h"
#include "tests/device_skip.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

std::string sample(const std::string& file) {
  return sample_dir() + "/" + file;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Tensor logits_of(const std::string& model, const std::string& out_dir,
                 const std::string& backend = "cpu") {
  CommandResult run =
      run_seqrt({"run", model, "--input", "tokens=" + sample("tokens.npy"),
                 "--output-dir", out_dir, "--backend", backend});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  Result<Tensor> logits = read_npy_file(out_dir + "/logits.npy");
  EXPECT_TRUE(logits.is_ok()) << logits.status().message();
  return logits.is_ok() ? *logits : Tensor();
}

TEST(QuantizeCli, HiddenLayersQuantizedTheFileRunsAndStaysClose) {
  const Tensor f32 = logits_of(sample("tiny_mlp.seqrt"), sample("f32_out"));
  for (const std::string bits : {"int4", "int8"}) {
    SCOPED_TRACE(bits);
    const std::string out = sample("tiny_" + bits + ".seqrt");
    CommandResult made =
        run_seqrt({"quantize", sample("tiny_mlp.seqrt"), out, "--weights", bits,
                   "--input", "tokens=" + sample("tokens.npy")});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_TRUE(contains(made.out, "quantized 4 weight(s)")) << made.out;
    EXPECT_TRUE(contains(made.out, "the output layer, kept in f32"))
        << made.out;
    EXPECT_TRUE(contains(made.out, "error of 'logits' against f32"))
        << made.out;
    const Tensor got = logits_of(out, sample(bits + "_out"));
    ASSERT_EQ(got.dims(), f32.dims());
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < f32.num_elements(); ++i) {
      worst =
          std::max(worst, std::fabs(got.element_f64(i) - f32.element_f64(i)));
      largest = std::max(largest, std::fabs(f32.element_f64(i)));
    }
    EXPECT_GT(worst, 0) << "the weights really changed";
    EXPECT_LT(worst / largest, bits == "int8" ? 0.01 : 0.1);
  }
}

// The quantized Linears on Vulkan's own kernels (no CPU fallback: the run
// is on vulkan alone) give the CPU's logits up to fp32 rounding.
TEST(QuantizeCli, TheQuantizedFileRunsOnVulkanAsOnTheCpu) {
  SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan");
  for (const std::string bits : {"int4", "int8"}) {
    SCOPED_TRACE(bits);
    const std::string out = sample("tiny_vk_" + bits + ".seqrt");
    CommandResult made = run_seqrt(
        {"quantize", sample("tiny_mlp.seqrt"), out, "--weights", bits});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const Tensor cpu = logits_of(out, sample("vk_" + bits + "_cpu_out"));
    const Tensor got =
        logits_of(out, sample("vk_" + bits + "_vulkan_out"), "vulkan");
    ASSERT_EQ(got.dims(), cpu.dims());
    for (int64_t i = 0; i < cpu.num_elements(); ++i) {
      const double want = cpu.element_f64(i);
      ASSERT_NEAR(got.element_f64(i), want, 1e-4 + 1e-4 * std::fabs(want))
          << "logit " << i;
    }
  }
}

TEST(QuantizeCli, SkipAndOutputLayerChooseTheNodes) {
  CommandResult made =
      run_seqrt({"quantize", sample("tiny_mlp.seqrt"),
                 sample("tiny_skip.seqrt"), "--weights", "int4", "--skip",
                 "block0.fc1.matmul", "--output-layer", "int8"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(contains(made.out, "skipped as asked")) << made.out;
  EXPECT_TRUE(contains(made.out, "lm_head.matmul: 32 x 64 -> int8"))
      << made.out;
  EXPECT_TRUE(contains(made.out, "quantized 4 weight(s)")) << made.out;
}

TEST(QuantizeCli, BadFlagsAreNamed) {
  CommandResult bits = run_seqrt({"quantize", sample("tiny_mlp.seqrt"),
                                  sample("x.seqrt"), "--weights", "int3"});
  EXPECT_EQ(bits.exit_code, 1);
  EXPECT_TRUE(contains(bits.err, "--weights 'int3': expected int8 or int4"))
      << bits.err;
  CommandResult block = run_seqrt({"quantize", sample("tiny_mlp.seqrt"),
                                   sample("x.seqrt"), "--block", "24"});
  EXPECT_EQ(block.exit_code, 1);
  EXPECT_TRUE(contains(block.err, "block size 24")) << block.err;
  CommandResult onnx =
      run_seqrt({"quantize", sample("tiny_mlp.seqrt"), sample("x.onnx")});
  EXPECT_EQ(onnx.exit_code, 1);
  EXPECT_TRUE(contains(onnx.err, "writes .seqrt files only")) << onnx.err;
}

}  // namespace
}  // namespace seqrt::e2e
