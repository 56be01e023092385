// Conformance cases of seqrt::QuantizedGather (ops/linalg/quantized_gather.h):
// bits 4 and 8, with and without zero points, K no multiple of the block
// (a short last block) and odd (a pad nibble), i32 and i64 indices of rank
// 0 to 2 with negative entries, and the malformed nodes.
#include <string>

#include "ops/linalg/quantized_gather.h"
#include "ops/linalg/quantized_linear.h"
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct GatherSpec {
  int64_t rows = 0;  // N, the table's entries
  int64_t k = 0;
  int64_t bits = 4;
  int64_t block = 32;
  bool zero_point = true;
  Tensor indices;
};

Tensor indices_of(DType dtype, std::vector<int64_t> dims,
                  std::vector<int64_t> values) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.set_element_i64(i, values[static_cast<size_t>(i)]);
  }
  return t;
}

OpCase gather(const std::string& name, const GatherSpec& s, uint64_t seed) {
  const int64_t blocks = (s.k + s.block - 1) / s.block;
  std::vector<Tensor> inputs = {
      random_tensor(DType::kU8, {s.rows, quantized_row_bytes(s.k, s.bits)},
                    seed, 0.0, 256.0),
      s.indices,
      random_tensor(DType::kF32, {s.rows, blocks}, seed + 1, 0.005, 0.05)};
  if (s.zero_point) {
    inputs.push_back(random_tensor(DType::kU8, {s.rows, blocks}, seed + 2, 0.0,
                                   s.bits == 4 ? 16.0 : 256.0));
  }
  OpCase c = make_case("QuantizedGather", name, std::move(inputs),
                       {{"bits", s.bits}, {"block_size", s.block}, {"K", s.k}});
  c.domain = kSeqrtDomain;
  c.constant_inputs = {true, false, true, true};
  return c;
}

}  // namespace

void add_quantized_gather_cases(std::vector<OpCase>& cases) {
  const Tensor tokens = indices_of(DType::kI64, {2, 3}, {0, 5, -1, 9, 2, 2});
  cases.push_back(
      gather("q4_zp_short_block", {10, 100, 4, 32, true, tokens}, 1));
  cases.push_back(gather(
      "q4_no_zp_odd_k",
      {7, 77, 4, 16, false, indices_of(DType::kI32, {4}, {6, 0, -7, 3})}, 10));
  cases.push_back(
      gather("q8_zp_scalar_index",
             {5, 64, 8, 16, true, indices_of(DType::kI64, {}, {-2})}, 20));
  cases.push_back(gather("q8_no_zp", {10, 130, 8, 128, false, tokens}, 30));
  OpCase f16 = gather("q4_f16_rows", {10, 48, 4, 16, true, tokens}, 35);
  f16.attrs["output_dtype"] = Attribute(int64_t{10});
  cases.push_back(f16);

  const GatherSpec base{10, 64, 4, 32, true, tokens};
  OpCase out_of_range =
      gather("q_rejects_index_out_of_range",
             {10, 64, 4, 32, true, indices_of(DType::kI64, {2}, {3, 10})}, 40);
  cases.push_back(expect_failure(out_of_range));
  OpCase bits2 = gather("q_rejects_bits_2", base, 50);
  bits2.attrs["bits"] = Attribute(2);
  cases.push_back(expect_failure(bits2));
  OpCase float_index = gather("q_rejects_float_indices", base, 60);
  float_index.inputs[kQuantizedGatherIndices] =
      random_tensor(DType::kF32, {3}, 61, 0.0, 9.0);
  cases.push_back(expect_failure(float_index));
  OpCase scale_shape = gather("q_rejects_scale_shape", base, 70);
  scale_shape.inputs[kQuantizedGatherWScale] =
      random_tensor(DType::kF32, {10, 3}, 71);
  cases.push_back(expect_failure(scale_shape));
}

}  // namespace seqrt
