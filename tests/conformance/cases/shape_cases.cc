// Conformance cases of ops/shape: the data-movement and shape ops. Inputs
// that inference needs as values (shapes, axes, starts, pads) are graph
// constants; some cases pass them at run time instead, where inference
// knows less. Data-movement ops run over several dtypes, since they must
// copy every dtype exactly.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

using Ints = std::vector<int64_t>;

// Every input after the first is a graph constant.
OpCase constant_args(OpCase c) {
  c.constant_inputs.assign(c.inputs.size(), true);
  c.constant_inputs[0] = false;
  return c;
}

OpCase with_outputs(OpCase c, size_t n) {
  c.num_outputs = n;
  return c;
}

Tensor ints(Ints values) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                      values);
}

// A one-element f16 tensor, as ConstantOfShape's value.
Tensor half_value(double value) {
  Tensor tensor = Tensor::allocate(DType::kF16, {1}).value();
  tensor.set_element_f64(0, value);
  return tensor;
}

Tensor rand(DType dtype, Ints dims, uint64_t seed) {
  if (is_integer(dtype))
    return random_tensor(dtype, std::move(dims), seed, -50, 50);
  return random_tensor(dtype, std::move(dims), seed);
}

void add_reshape_cases(std::vector<OpCase>& cases) {
  const char* op = "Reshape";
  cases.push_back(constant_args(
      make_case(op, "f32_split_heads",
                {rand(DType::kF32, {2, 3, 8}, 1), ints({0, 0, 2, -1})})));
  cases.push_back(constant_args(make_case(
      op, "f16_flatten", {rand(DType::kF16, {4, 5}, 2), ints({-1})})));
  cases.push_back(constant_args(make_case(
      op, "i64_to_rank3", {rand(DType::kI64, {6}, 3), ints({1, 3, 2})})));
  cases.push_back(constant_args(
      make_case(op, "allowzero_empty",
                {Tensor::allocate(DType::kF32, {0, 4}).value(), ints({4, 0})},
                {{"allowzero", 1}})));
  cases.push_back(make_case(op, "runtime_shape",
                            {rand(DType::kBool, {2, 6}, 4), ints({3, 4})}));
  cases.push_back(expect_failure(
      constant_args(make_case(op, "rejects_count_mismatch",
                              {rand(DType::kF32, {2, 3}, 5), ints({4, 2})}))));
  cases.push_back(expect_failure(
      make_case(op, "rejects_two_minus_ones",
                {rand(DType::kF32, {2, 3}, 6), ints({-1, -1})})));
}

void add_transpose_cases(std::vector<OpCase>& cases) {
  const char* op = "Transpose";
  cases.push_back(
      make_case(op, "f32_default_reverse", {rand(DType::kF32, {2, 3, 4}, 11)}));
  cases.push_back(make_case(op, "bf16_heads",
                            {rand(DType::kBF16, {2, 5, 3, 4}, 12)},
                            {{"perm", Ints{0, 2, 1, 3}}}));
  cases.push_back(make_case(op, "u8_2d", {rand(DType::kU8, {3, 7}, 13)},
                            {{"perm", Ints{1, 0}}}));
  cases.push_back(make_case(op, "f64_rank1", {rand(DType::kF64, {5}, 14)}));
  // 16384 elements and up: the CPU backend runs a transpose that moves the
  // last axis on oneDNN's reorder; one that keeps it stays on its own copy.
  cases.push_back(make_case(op, "f32_onednn_size_2d",
                            {rand(DType::kF32, {1, 192, 128}, 16)},
                            {{"perm", Ints{0, 2, 1}}}));
  cases.push_back(make_case(op, "f32_onednn_size_heads",
                            {rand(DType::kF32, {2, 64, 4, 32}, 17)},
                            {{"perm", Ints{0, 2, 1, 3}}}));
  cases.push_back(expect_failure(make_case(op, "rejects_bad_perm",
                                           {rand(DType::kF32, {2, 3}, 15)},
                                           {{"perm", Ints{1, 1}}})));
}

void add_concat_cases(std::vector<OpCase>& cases) {
  const char* op = "Concat";
  cases.push_back(make_case(
      op, "f32_axis1",
      {rand(DType::kF32, {2, 3, 4}, 21), rand(DType::kF32, {2, 1, 4}, 22),
       rand(DType::kF32, {2, 5, 4}, 23)},
      {{"axis", 1}}));
  cases.push_back(
      make_case(op, "i64_negative_axis",
                {rand(DType::kI64, {3, 2}, 24), rand(DType::kI64, {3, 3}, 25)},
                {{"axis", -1}}));
  cases.push_back(make_case(op, "f16_axis0_with_empty",
                            {rand(DType::kF16, {2, 3}, 26),
                             Tensor::allocate(DType::kF16, {0, 3}).value()},
                            {{"axis", 0}}));
  cases.push_back(
      make_case(op, "i8_single", {rand(DType::kI8, {4}, 27)}, {{"axis", 0}}));
  cases.push_back(expect_failure(
      make_case(op, "rejects_dim_mismatch",
                {rand(DType::kF32, {2, 3}, 28), rand(DType::kF32, {3, 3}, 29)},
                {{"axis", 1}})));
}

void add_split_cases(std::vector<OpCase>& cases) {
  const char* op = "Split";
  cases.push_back(with_outputs(
      constant_args(make_case(op, "f32_given_sizes",
                              {rand(DType::kF32, {2, 7}, 31), ints({2, 0, 5})},
                              {{"axis", -1}})),
      3));
  cases.push_back(with_outputs(
      make_case(op, "i32_num_outputs_uneven", {rand(DType::kI32, {10, 2}, 32)},
                {{"num_outputs", 3}}),
      3));
  cases.push_back(
      with_outputs(make_case(op, "bf16_even_default",
                             {rand(DType::kBF16, {3, 4}, 33)}, {{"axis", 1}}),
                   2));
  cases.push_back(
      with_outputs(make_case(op, "runtime_split",
                             {rand(DType::kF64, {6}, 34), ints({1, 5})}),
                   2));
  cases.push_back(expect_failure(with_outputs(
      constant_args(make_case(op, "rejects_bad_sum",
                              {rand(DType::kF32, {5}, 35), ints({2, 2})})),
      2)));
  cases.push_back(expect_failure(with_outputs(
      make_case(op, "rejects_num_outputs_mismatch",
                {rand(DType::kF32, {6}, 36)}, {{"num_outputs", 3}}),
      2)));
}

void add_slice_cases(std::vector<OpCase>& cases) {
  const char* op = "Slice";
  constexpr int64_t kBig = int64_t{1} << 62;
  cases.push_back(
      constant_args(make_case(op, "f32_axes_steps",
                              {rand(DType::kF32, {4, 6, 3}, 41), ints({1, 0}),
                               ints({-1, kBig}), ints({0, 1}), ints({1, 2})})));
  cases.push_back(
      constant_args(make_case(op, "i64_negative_step",
                              {rand(DType::kI64, {7}, 42), ints({-2}),
                               ints({-kBig}), ints({0}), ints({-2})})));
  cases.push_back(constant_args(make_case(
      op, "f16_default_axes",
      {rand(DType::kF16, {5, 4}, 43), ints({1, -3}), ints({4, 100})})));
  cases.push_back(constant_args(
      make_case(op, "u8_empty_result",
                {rand(DType::kU8, {5}, 44), ints({4}), ints({2})})));
  cases.push_back(make_case(
      op, "runtime_starts",
      {rand(DType::kF32, {3, 8}, 45), ints({2}), ints({7}), ints({1})}));
  cases.push_back(constant_args(make_case(
      op, "i32_indices",
      {rand(DType::kF32, {6}, 46), Tensor::from_vector<int32_t>({1}, {1}),
       Tensor::from_vector<int32_t>({1}, {5})})));
  cases.push_back(expect_failure(
      constant_args(make_case(op, "rejects_zero_step",
                              {rand(DType::kF32, {4}, 47), ints({0}), ints({4}),
                               ints({0}), ints({0})}))));
  cases.push_back(
      expect_failure(make_case(op, "rejects_repeated_axis",
                               {rand(DType::kF32, {4, 4}, 48), ints({0, 0}),
                                ints({2, 2}), ints({1, -1})})));
}

void add_gather_cases(std::vector<OpCase>& cases) {
  const char* op = "Gather";
  cases.push_back(
      make_case(op, "f32_embedding",
                {rand(DType::kF32, {10, 4}, 51),
                 Tensor::from_vector<int64_t>({2, 3}, {0, 9, -1, 3, -10, 5})}));
  cases.push_back(make_case(op, "bf16_axis1_i32",
                            {rand(DType::kBF16, {2, 5, 3}, 52),
                             Tensor::from_vector<int32_t>({2}, {4, -5})},
                            {{"axis", 1}}));
  cases.push_back(
      make_case(op, "bool_scalar_index",
                {rand(DType::kBool, {3, 4}, 53), Tensor::scalar<int64_t>(-1)},
                {{"axis", -1}}));
  cases.push_back(
      constant_args(make_case(op, "i64_constant_indices",
                              {rand(DType::kI64, {6}, 54), ints({5, 0, 5})})));
  cases.push_back(
      expect_failure(make_case(op, "rejects_index_too_large",
                               {rand(DType::kF32, {3, 2}, 55), ints({0, 3})})));
  cases.push_back(
      expect_failure(make_case(op, "rejects_index_too_small",
                               {rand(DType::kF32, {3, 2}, 56), ints({-4})})));
  cases.push_back(expect_failure(constant_args(make_case(
      op, "rejects_constant_index", {rand(DType::kI32, {4}, 57), ints({4})}))));
}

void add_gather_elements_cases(std::vector<OpCase>& cases) {
  const char* op = "GatherElements";
  cases.push_back(
      make_case(op, "f32_axis0",
                {rand(DType::kF32, {3, 3}, 61),
                 Tensor::from_vector<int64_t>({2, 3}, {1, 2, 0, 2, 0, -1})}));
  cases.push_back(make_case(
      op, "i32_axis_last_smaller_indices",
      {rand(DType::kI32, {2, 3, 4}, 62),
       Tensor::from_vector<int32_t>({2, 2, 2}, {3, 0, 1, 2, -1, -4, 0, 0})},
      {{"axis", -1}}));
  cases.push_back(
      expect_failure(make_case(op, "rejects_out_of_range",
                               {rand(DType::kF32, {2, 2}, 63),
                                Tensor::from_vector<int64_t>({1, 2}, {0, 2})},
                               {{"axis", 1}})));
}

void add_unsqueeze_squeeze_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      constant_args(make_case("Unsqueeze", "f32_front_back",
                              {rand(DType::kF32, {3, 4}, 71), ints({0, -1})})));
  cases.push_back(constant_args(make_case(
      "Unsqueeze", "i8_scalar", {Tensor::scalar<int8_t>(-3), ints({0})})));
  cases.push_back(make_case("Unsqueeze", "runtime_axes",
                            {rand(DType::kF16, {2, 3}, 72), ints({1})}));
  cases.push_back(expect_failure(
      constant_args(make_case("Unsqueeze", "rejects_repeated_axes",
                              {rand(DType::kF32, {3}, 73), ints({1, 1})}))));
  cases.push_back(constant_args(
      make_case("Squeeze", "f32_given_axes",
                {rand(DType::kF32, {1, 3, 1, 2}, 74), ints({0, -2})})));
  cases.push_back(make_case("Squeeze", "bool_all_unit_dims",
                            {rand(DType::kBool, {1, 2, 1}, 75)}));
  cases.push_back(make_case("Squeeze", "runtime_axes",
                            {rand(DType::kI64, {2, 1}, 76), ints({1})}));
  cases.push_back(expect_failure(
      constant_args(make_case("Squeeze", "rejects_non_unit_axis",
                              {rand(DType::kF32, {2, 3}, 77), ints({0})}))));
}

void add_expand_cases(std::vector<OpCase>& cases) {
  const char* op = "Expand";
  cases.push_back(constant_args(make_case(
      op, "f32_both_ways", {rand(DType::kF32, {3, 1}, 81), ints({2, 1, 4})})));
  cases.push_back(constant_args(make_case(
      op, "f64_same_rank", {rand(DType::kF64, {1, 4}, 82), ints({3, 4})})));
  cases.push_back(make_case(op, "u8_runtime_shape",
                            {rand(DType::kU8, {2, 1, 3}, 83), ints({5, 1})}));
  cases.push_back(expect_failure(constant_args(make_case(
      op, "rejects_incompatible", {rand(DType::kF32, {3}, 84), ints({2})}))));
}

void add_shape_and_fill_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      make_case("Shape", "f32_full", {rand(DType::kF32, {2, 3, 4}, 91)}));
  cases.push_back(make_case("Shape", "bool_start_end",
                            {rand(DType::kBool, {2, 3, 4, 5}, 92)},
                            {{"start", 1}, {"end", -1}}));
  cases.push_back(make_case("Shape", "i32_clamped",
                            {rand(DType::kI32, {7}, 93)},
                            {{"start", -10}, {"end", 10}}));
  cases.push_back(make_case("ConstantOfShape", "default_f32", {ints({2, 3})}));
  cases.push_back(
      make_case("ConstantOfShape", "i64_value", {ints({4})},
                {{"value", Tensor::from_vector<int64_t>({1}, {-9})}}));
  OpCase known_shape =
      make_case("ConstantOfShape", "f16_constant_shape", {ints({3, 1, 2})},
                {{"value", half_value(2.5)}});
  known_shape.constant_inputs = {true};
  cases.push_back(known_shape);
  cases.push_back(expect_failure(
      make_case("ConstantOfShape", "rejects_negative_dim", {ints({2, -2})})));
}

void add_range_cases(std::vector<OpCase>& cases) {
  const char* op = "Range";
  auto scalars = [](auto start, auto limit, auto delta) {
    using T = decltype(start);
    return std::vector<Tensor>{Tensor::scalar<T>(start),
                               Tensor::scalar<T>(limit),
                               Tensor::scalar<T>(delta)};
  };
  cases.push_back(
      make_case(op, "i64_up", scalars(int64_t{-3}, int64_t{8}, int64_t{2})));
  cases.push_back(make_case(op, "i32_down",
                            scalars(int32_t{10}, int32_t{-2}, int32_t{-4})));
  cases.push_back(make_case(op, "f32_fraction", scalars(0.5f, 3.0f, 0.75f)));
  cases.push_back(make_case(op, "f64_empty", scalars(1.0, 1.0, 1.0)));
  OpCase known = make_case(op, "i64_constant_inputs",
                           scalars(int64_t{0}, int64_t{5}, int64_t{1}));
  known.constant_inputs = {true, true, true};
  cases.push_back(known);
  cases.push_back(expect_failure(make_case(
      op, "rejects_zero_delta", scalars(int64_t{0}, int64_t{4}, int64_t{0}))));
}

void add_pad_cases(std::vector<OpCase>& cases) {
  const char* op = "Pad";
  cases.push_back(constant_args(
      make_case(op, "f32_constant_value",
                {rand(DType::kF32, {2, 3}, 101), ints({1, 0, 2, 1}),
                 Tensor::scalar<float>(-2.5f)})));
  cases.push_back(constant_args(make_case(
      op, "f16_reflect", {rand(DType::kF16, {3, 4}, 102), ints({2, 1, 1, 3})},
      {{"mode", "reflect"}})));
  cases.push_back(constant_args(make_case(
      op, "i32_edge", {rand(DType::kI32, {2, 2}, 103), ints({3, 0, 0, 2})},
      {{"mode", "edge"}})));
  cases.push_back(constant_args(make_case(
      op, "u8_wrap", {rand(DType::kU8, {1, 3}, 104), ints({0, 4, 0, 5})},
      {{"mode", "wrap"}})));
  // constant_value omitted; pads and axes constant.
  OpCase crop = make_case(
      op, "f64_axes_and_crop",
      {rand(DType::kF64, {2, 3, 4}, 105), ints({-1, 2}), Tensor(), ints({-1})});
  crop.constant_inputs = {false, true, false, true};
  cases.push_back(crop);
  cases.push_back(make_case(op, "runtime_pads",
                            {rand(DType::kBF16, {3}, 106), ints({1, 1})}));
  cases.push_back(expect_failure(
      constant_args(make_case(op, "rejects_crop_below_zero",
                              {rand(DType::kF32, {2}, 107), ints({-2, -1})}))));
  cases.push_back(expect_failure(
      make_case(op, "rejects_wrong_pad_count",
                {rand(DType::kF32, {2, 2}, 108), ints({1, 1})})));
}

void add_misc_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      make_case("Identity", "f32", {rand(DType::kF32, {3, 2}, 111)}));
  cases.push_back(
      make_case("Identity", "bool_scalar", {Tensor::scalar<bool>(true)}));
  cases.push_back(
      make_case("Identity", "bf16", {rand(DType::kBF16, {5}, 112)}));
  cases.push_back(make_case("Constant", "tensor_value", {},
                            {{"value", rand(DType::kF16, {2, 3}, 113)}}));
  cases.push_back(
      make_case("Constant", "value_float", {}, {{"value_float", 0.25f}}));
  cases.push_back(make_case("Constant", "value_ints", {},
                            {{"value_ints", Ints{3, -1, 0}}}));
  cases.push_back(make_case("Constant", "value_int", {}, {{"value_int", 42}}));
  cases.push_back(make_case("Constant", "value_floats", {},
                            {{"value_floats", std::vector<float>{1, 2}}}));
  cases.push_back(
      expect_failure(make_case("Constant", "rejects_no_value", {})));
  cases.push_back(
      make_case("Trilu", "f32_upper", {rand(DType::kF32, {4, 5}, 114)}));
  cases.push_back(make_case(
      "Trilu", "i64_lower_k",
      {rand(DType::kI64, {2, 3, 3}, 115), Tensor::scalar<int64_t>(-1)},
      {{"upper", 0}}));
  cases.push_back(
      make_case("Trilu", "bool_causal_mask",
                {rand(DType::kBool, {5, 5}, 116), Tensor::scalar<int64_t>(1)}));
  cases.push_back(
      make_case("Trilu", "f16_k_past_edge",
                {rand(DType::kF16, {3, 2}, 117), Tensor::scalar<int64_t>(10)}));
  cases.push_back(expect_failure(
      make_case("Trilu", "rejects_rank1", {rand(DType::kF32, {4}, 118)})));
}

void add_flatten_size_tile_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Flatten", "f32_default_axis",
                            {rand(DType::kF32, {2, 3, 4}, 120)}));
  cases.push_back(make_case("Flatten", "i64_axis0",
                            {rand(DType::kI64, {3, 5}, 121)}, {{"axis", 0}}));
  cases.push_back(make_case("Flatten", "bf16_negative_axis",
                            {rand(DType::kBF16, {2, 3, 2, 5}, 122)},
                            {{"axis", -2}}));
  cases.push_back(make_case("Flatten", "bool_axis_rank",
                            {rand(DType::kBool, {3, 4}, 123)}, {{"axis", 2}}));
  cases.push_back(expect_failure(make_case("Flatten", "rejects_axis_past_rank",
                                           {rand(DType::kF32, {3, 4}, 124)},
                                           {{"axis", 3}})));
  cases.push_back(
      make_case("Size", "f32_2x3x4", {rand(DType::kF32, {2, 3, 4}, 125)}));
  cases.push_back(make_case("Size", "u8_scalar", {rand(DType::kU8, {}, 126)}));
  cases.push_back(make_case("Size", "i32_empty",
                            {Tensor::allocate(DType::kI32, {4, 0}).value()}));
  cases.push_back(
      constant_args(make_case("Tile", "f32_2x3_by_2x2",
                              {rand(DType::kF32, {2, 3}, 127), ints({2, 2})})));
  cases.push_back(constant_args(
      make_case("Tile", "f16_rank3_with_zero",
                {rand(DType::kF16, {2, 1, 3}, 128), ints({1, 0, 2})})));
  cases.push_back(make_case("Tile", "i64_runtime_repeats",
                            {rand(DType::kI64, {5}, 129), ints({3})}));
  cases.push_back(constant_args(make_case(
      "Tile", "bool_3x2", {rand(DType::kBool, {3, 2}, 130), ints({1, 4})})));
  cases.push_back(expect_failure(
      constant_args(make_case("Tile", "rejects_short_repeats",
                              {rand(DType::kF32, {2, 3}, 131), ints({2})}))));
}

}  // namespace

void add_shape_cases(std::vector<OpCase>& cases) {
  add_reshape_cases(cases);
  add_transpose_cases(cases);
  add_concat_cases(cases);
  add_split_cases(cases);
  add_slice_cases(cases);
  add_gather_cases(cases);
  add_gather_elements_cases(cases);
  add_unsqueeze_squeeze_cases(cases);
  add_expand_cases(cases);
  add_shape_and_fill_cases(cases);
  add_range_cases(cases);
  add_pad_cases(cases);
  add_misc_cases(cases);
  add_flatten_size_tile_cases(cases);
}

}  // namespace seqrt
