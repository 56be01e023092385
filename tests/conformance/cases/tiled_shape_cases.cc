// Conformance cases at shapes that cross the tiles and workgroups of GPU
// kernels (the Vulkan GEMM's 64x64 tiles and 16-deep K steps, the 128
// invocations of its row kernels): partial tiles in M, N and K, rows longer
// than one workgroup, decode-shaped (M = 1) and grouped-query-shaped
// products, negative steps and indices, and integer and bool conversions
// with negative values. The ops' own files hold the small cases.
#include <cstdint>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

using Ints = std::vector<int64_t>;

Tensor f32(Ints dims, uint64_t seed) {
  return random_tensor(DType::kF32, std::move(dims), seed);
}

Tensor ints(Ints values) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                      values);
}

// Every input after the first is a graph constant.
OpCase constant_args(OpCase c) {
  c.constant_inputs.assign(c.inputs.size(), true);
  c.constant_inputs[0] = false;
  return c;
}

void add_gemm_tile_cases(std::vector<OpCase>& cases) {
  // fp32 sums of up to 130 products: compare at 1e-4.
  cases.push_back(loosened(make_case("MatMul", "tiles_130x70_70x67",
                                     {f32({130, 70}, 1), f32({70, 67}, 2)}),
                           1e-4));
  cases.push_back(
      loosened(make_case("MatMul", "tiles_batch_broadcast",
                         {f32({3, 1, 65, 33}, 3), f32({4, 33, 17}, 4)}),
               1e-4));
  cases.push_back(
      loosened(make_case("MatMul", "tiles_decode_scores",
                         {f32({2, 8, 1, 64}, 5), f32({2, 8, 64, 129}, 6)}),
               1e-4));
  cases.push_back(
      loosened(make_case("MatMul", "tiles_gqa_broadcast_heads",
                         {f32({2, 4, 2, 5, 16}, 7), f32({2, 4, 1, 16, 9}, 8)}),
               1e-4));
  cases.push_back(loosened(
      make_case(
          "Gemm", "tiles_transposed_bias",
          {f32({90, 70}, 9), f32({100, 90}, 10), f32({100}, 11)},
          {{"transA", 1}, {"transB", 1}, {"alpha", 0.5f}, {"beta", -1.5f}}),
      1e-4));
}

void add_row_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      make_case("Softmax", "rows_longer_than_workgroup", {f32({3, 300}, 21)}));
  cases.push_back(make_case("LogSoftmax", "rows_strided_axis",
                            {f32({4, 200, 3}, 22)}, {{"axis", 1}}));
  cases.push_back(loosened(
      make_case("LayerNormalization", "rows_517_all_outputs",
                {f32({5, 517}, 23), f32({517}, 24), f32({517}, 25)}, {}, 3),
      1e-4));
  cases.push_back(loosened(make_case("RMSNormalization", "rows_2x1000",
                                     {f32({2, 1000}, 26), f32({1000}, 27)}),
                           1e-4));
  OpCase sum = make_case("ReduceSum", "rows_middle_axis",
                         {f32({7, 300, 5}, 28), ints({1})});
  sum.constant_inputs = {false, true};
  cases.push_back(loosened(sum, 1e-4));
  OpCase max =
      make_case("ReduceMax", "rows_outer_axes_drop",
                {f32({6, 4, 150}, 29), ints({0, 2})}, {{"keepdims", 0}});
  max.constant_inputs = {false, true};
  cases.push_back(max);
  // Rows longer than a workgroup with many ties, first and last index.
  std::vector<float> tied(2 * 300);
  for (size_t i = 0; i < tied.size(); ++i)
    tied[i] = static_cast<float>(i * 7 % 5);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      cases.push_back(make_case(op, last ? "rows_ties_last" : "rows_ties_first",
                                {Tensor::from_vector<float>({2, 300}, tied)},
                                {{"axis", 1}, {"select_last_index", last}}));
    }
  }
  OpCase cumsum = make_case("CumSum", "rows_reverse_exclusive",
                            {f32({3, 200}, 30), ints({1})},
                            {{"reverse", 1}, {"exclusive", 1}});
  cumsum.inputs[1] = Tensor::scalar<int64_t>(1);
  cumsum.constant_inputs = {false, true};
  cases.push_back(loosened(cumsum, 1e-4));
}

void add_index_cases(std::vector<OpCase>& cases) {
  constexpr int64_t kBig = int64_t{1} << 62;
  cases.push_back(constant_args(
      make_case("Slice", "negative_steps_two_axes",
                {f32({5, 7, 3}, 41), ints({-1, 5}), ints({-kBig, 0}),
                 ints({0, 1}), ints({-2, -1})})));
  cases.push_back(make_case("Gather", "axis1_negative_i32",
                            {f32({3, 6, 2}, 42), Tensor::from_vector<int32_t>(
                                                     {2, 2}, {-1, 0, 5, -6})},
                            {{"axis", 1}}));
  cases.push_back(make_case("Where", "broadcast_three_ways",
                            {random_tensor(DType::kBool, {1, 5}, 43),
                             f32({4, 1}, 44), f32({3, 4, 5}, 45)}));
  cases.push_back(make_case("Less", "i64_negative",
                            {random_tensor(DType::kI64, {9}, 46, -5e9, 5e9),
                             random_tensor(DType::kI64, {9}, 47, -5e9, 5e9)}));
  cases.push_back(make_case("Cast", "f32_to_i64_negative",
                            {random_tensor(DType::kF32, {11}, 48, -1e6, 1e6)},
                            {{"to", static_cast<int64_t>(7)}}));
  cases.push_back(make_case("Cast", "i64_past_32_bits_to_f32",
                            {random_tensor(DType::kI64, {7}, 49, -5e9, 5e9)},
                            {{"to", static_cast<int64_t>(1)}}));
  cases.push_back(make_case("Cast", "f32_to_bool_odd_count",
                            {random_tensor(DType::kF32, {7}, 50, -1, 1)},
                            {{"to", static_cast<int64_t>(9)}}));
  cases.push_back(make_case("Cast", "bool_to_i64",
                            {random_tensor(DType::kBool, {6}, 51)},
                            {{"to", static_cast<int64_t>(7)}}));
  cases.push_back(make_case("Not", "bool_odd_count",
                            {random_tensor(DType::kBool, {2, 7}, 52)}));
  cases.push_back(make_case(
      "Div", "i64_constant_divisor",
      {random_tensor(DType::kI64, {2, 5}, 53, -5e9, 5e9),
       Tensor::from_vector<int64_t>({5}, {3, -7, 1, -1, 4000000000})}));
  cases.back().constant_inputs = {false, true};
  for (int64_t fmod : {0, 1}) {
    cases.push_back(make_case(
        "Mod", fmod ? "i64_constant_divisor_fmod" : "i64_constant_divisor",
        {random_tensor(DType::kI64, {2, 5}, 56, -5e9, 5e9),
         Tensor::from_vector<int64_t>({5}, {3, -7, 1, -1, 4000000000})},
        {{"fmod", fmod}}));
    cases.back().constant_inputs = {false, true};
  }
  cases.push_back(make_case("Mul", "i64_wraps_past_32_bits",
                            {random_tensor(DType::kI64, {6}, 54, -3e5, 3e5),
                             random_tensor(DType::kI64, {6}, 55, -3e5, 3e5)}));
}

}  // namespace

void add_tiled_shape_cases(std::vector<OpCase>& cases) {
  add_gemm_tile_cases(cases);
  add_row_cases(cases);
  add_index_cases(cases);
}

}  // namespace seqrt
