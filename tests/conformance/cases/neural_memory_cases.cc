// seqrt::NeuralMemory (OPS.md): chunk sizes 1/16/64 against the token loop,
// both activations and depths, retrieval before/after the update,
// continuation from a past state mid-chunk, decode, f16, and bad inputs.
#include <cmath>
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct MemoryCase {
  std::string name;
  int64_t batch = 1, heads = 2, seq = 24, d = 16, m = 64;
  int depth = 2;
  int64_t chunk = 1;
  std::string activation = "gelu";
  std::string retrieve = "after_update";
  bool past = false;  // past_state and position (mid-chunk) given
  DType dtype = DType::kF32;
};

OpCase memory_case(const MemoryCase& mc, uint64_t seed) {
  double unit = 1.0 / std::sqrt(static_cast<double>(mc.d));
  std::vector<int64_t> seq4 = {mc.batch, mc.heads, mc.seq, mc.d};
  std::vector<int64_t> seq3 = {mc.batch, mc.heads, mc.seq};
  std::vector<Tensor> in = {
      random_tensor(mc.dtype, seq4, seed, -2 * unit, 2 * unit),
      random_tensor(mc.dtype, seq4, seed + 1, -2 * unit, 2 * unit),
      random_tensor(mc.dtype, seq4, seed + 2),
      random_tensor(mc.dtype, seq3, seed + 3, 0.0, 0.05),
      random_tensor(mc.dtype, seq3, seed + 4, 0.5, 0.95),
      random_tensor(mc.dtype, seq3, seed + 5, 0.0, 0.1),
      random_tensor(mc.dtype, {mc.heads, mc.d, mc.m}, seed + 6, -unit, unit)};
  int64_t params = mc.d * mc.m * mc.depth;
  if (mc.depth == 2) {
    double s2 = 1.0 / std::sqrt(static_cast<double>(mc.m));
    in.push_back(
        random_tensor(mc.dtype, {mc.heads, mc.m, mc.d}, seed + 7, -s2, s2));
  } else {
    in.push_back(Tensor());
  }
  if (mc.past) {
    in.push_back(random_tensor(DType::kF32, {mc.batch, mc.heads, 3 * params},
                               seed + 8, -0.2, 0.2));
    std::vector<int64_t> positions;
    for (int64_t b = 0; b < mc.batch; ++b) positions.push_back(5 + 3 * b);
    in.push_back(Tensor::from_vector<int64_t>({mc.batch}, positions));
  }
  AttrMap attrs = {{"depth", int64_t{mc.depth}},
                   {"chunk_size", mc.chunk},
                   {"activation", mc.activation},
                   {"retrieve", mc.retrieve}};
  OpCase c = make_case("NeuralMemory", mc.name, std::move(in), attrs, 2);
  c.domain = kSeqrtDomain;
  // The CPU kernel sums the chunk's gradients in f32 in another order.
  return loosened(std::move(c), mc.dtype == DType::kF32 ? 3e-4 : 3e-3);
}

}  // namespace

void add_neural_memory_cases(std::vector<OpCase>& cases) {
  std::vector<MemoryCase> list;
  auto add = [&](MemoryCase mc) { list.push_back(std::move(mc)); };
  for (int64_t chunk : {1, 16, 64}) {
    MemoryCase mc;
    mc.name = "gelu_d16_m64_chunk" + std::to_string(chunk);
    mc.seq = 70;  // ends mid-chunk
    mc.chunk = chunk;
    add(mc);
  }
  MemoryCase big;
  big.name = "gelu_d64_m256_chunk16";
  big.heads = 1;
  big.seq = 40;
  big.d = 64;
  big.m = 256;
  big.chunk = 16;
  add(big);
  MemoryCase square;
  square.name = "silu_d64_m64_chunk64_before";
  square.heads = 1;
  square.seq = 40;
  square.d = 64;
  square.m = 64;
  square.chunk = 64;
  square.activation = "silu";
  square.retrieve = "before_update";
  add(square);
  MemoryCase depth1;
  depth1.name = "depth1_chunk8_continued";
  depth1.depth = 1;
  depth1.m = 16;
  depth1.chunk = 8;
  depth1.batch = 2;
  depth1.past = true;
  add(depth1);
  MemoryCase continued;
  continued.name = "silu_chunk16_continued_mid_chunk";
  continued.batch = 2;
  continued.chunk = 16;
  continued.activation = "silu";
  continued.past = true;
  add(continued);
  MemoryCase decode;
  decode.name = "decode_chunk4";
  decode.seq = 1;
  decode.chunk = 4;
  decode.past = true;
  add(decode);
  MemoryCase half;
  half.name = "f16_chunk8";
  half.chunk = 8;
  half.dtype = DType::kF16;
  add(half);
  uint64_t seed = 9100;
  for (const MemoryCase& mc : list)
    cases.push_back(memory_case(mc, seed += 16));

  // Bad inputs fail on every backend.
  MemoryCase base;
  base.seq = 4;
  OpCase depth1_wide = memory_case(base, 9900);
  depth1_wide.name = "error_depth1_needs_m_equal_d";
  depth1_wide.attrs["depth"] = int64_t{1};
  depth1_wide.inputs[7] = Tensor();
  cases.push_back(expect_failure(depth1_wide));
  OpCase no_w2 = memory_case(base, 9910);
  no_w2.name = "error_depth2_without_w2";
  no_w2.inputs[7] = Tensor();
  cases.push_back(expect_failure(no_w2));
  OpCase bad_state = memory_case(base, 9920);
  bad_state.name = "error_past_state_size";
  bad_state.inputs.push_back(random_tensor(DType::kF32, {1, 2, 10}, 1));
  cases.push_back(expect_failure(bad_state));
  OpCase bad_gate = memory_case(base, 9930);
  bad_gate.name = "error_theta_shape";
  bad_gate.inputs[3] = random_tensor(DType::kF32, {1, 2, 5}, 2);
  cases.push_back(expect_failure(bad_gate));
  // A graph input the Vulkan kernel reads on the device (its error word).
  MemoryCase negative = base;
  negative.past = true;
  OpCase bad_position = memory_case(negative, 9940);
  bad_position.name = "error_negative_position";
  bad_position.inputs[9] = Tensor::from_vector<int64_t>({1}, {-3});
  cases.push_back(expect_failure(bad_position));
}

}  // namespace seqrt
