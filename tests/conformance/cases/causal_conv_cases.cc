// CausalConvWithState cases (ONNX opset 27): kernel sizes 1 to 4, decode
// steps and long prefills, with and without bias, past_state and SiLU,
// half precision, and shapes that must be rejected.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

OpCase conv_case(const std::string& name, int64_t batch, int64_t channels,
                 int64_t length, int64_t k, bool bias, bool past,
                 const char* activation, DType dtype = DType::kF32) {
  const uint64_t seed = std::hash<std::string>{}(name);
  std::vector<Tensor> inputs = {
      random_tensor(dtype, {batch, channels, length}, seed, -2.0, 2.0),
      random_tensor(dtype, {channels, 1, k}, seed + 1),
      bias ? random_tensor(dtype, {channels}, seed + 2) : Tensor(),
      past ? random_tensor(dtype, {batch, channels, k - 1}, seed + 3, -2.0, 2.0)
           : Tensor()};
  OpCase c = make_case("CausalConvWithState", name, std::move(inputs),
                       {{"activation", activation}}, 2);
  return loosened(std::move(c), dtype == DType::kF32 ? 1e-5 : 2e-3);
}

}  // namespace

void add_causal_conv_cases(std::vector<OpCase>& cases) {
  for (int64_t k : {1, 2, 4}) {
    for (int64_t length : {1, 4, 100, 2048}) {
      const std::string suffix =
          "_k" + std::to_string(k) + "_L" + std::to_string(length);
      cases.push_back(conv_case("silu_bias_past" + suffix, 2, 24, length, k,
                                true, true, "silu"));
      cases.push_back(
          conv_case("plain" + suffix, 1, 8, length, k, false, false, "none"));
    }
  }
  cases.push_back(
      conv_case("swish_past_only", 1, 16, 3, 4, false, true, "swish"));
  cases.push_back(
      conv_case("short_input_long_kernel", 1, 4, 2, 7, true, true, "none"));
  cases.push_back(
      conv_case("f16_silu", 2, 16, 50, 4, true, true, "silu", DType::kF16));
  cases.push_back(
      conv_case("bf16_decode", 1, 16, 1, 4, true, true, "none", DType::kBF16));
  {
    OpCase bad = conv_case("bad_state_length", 1, 4, 5, 4, false, true, "none");
    bad.inputs[3] = random_tensor(DType::kF32, {1, 4, 2}, 1);
    cases.push_back(expect_failure(bad));
    OpCase mixed = conv_case("mixed_dtypes", 1, 4, 5, 4, true, false, "none");
    mixed.inputs[2] = random_tensor(DType::kF16, {4}, 1);
    cases.push_back(expect_failure(mixed));
    OpCase channels =
        conv_case("weight_channels", 1, 4, 5, 4, false, false, "none");
    channels.inputs[1] = random_tensor(DType::kF32, {5, 1, 4}, 1);
    cases.push_back(expect_failure(channels));
  }
}

}  // namespace seqrt
