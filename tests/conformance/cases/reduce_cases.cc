// Conformance cases of ops/reduce: ReduceSum/Mean/Max/Min over constant and
// run-time axes, keepdims, noop_with_empty_axes, each dtype class; CumSum
// with its attributes.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

// The second input (axes) is a graph constant, as inference needs it.
OpCase with_constant_axes(OpCase c) {
  c.constant_inputs = {false, true};
  return c;
}

Tensor axes(std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                      values);
}

void add_reduce_op_cases(std::vector<OpCase>& cases, const char* op,
                         uint64_t seed) {
  cases.push_back(with_constant_axes(
      make_case(op, "f32_3x4x5_axis1",
                {random_tensor(DType::kF32, {3, 4, 5}, ++seed), axes({1})})));
  cases.push_back(with_constant_axes(
      make_case(op, "f32_axes_0_2_drop",
                {random_tensor(DType::kF32, {3, 4, 5}, ++seed), axes({0, 2})},
                {{"keepdims", 0}})));
  cases.push_back(with_constant_axes(
      make_case(op, "f32_negative_axis",
                {random_tensor(DType::kF32, {2, 7}, ++seed), axes({-1})})));
  cases.push_back(make_case(op, "f32_all_axes_no_input",
                            {random_tensor(DType::kF32, {3, 5}, ++seed)}));
  cases.push_back(make_case(op, "f32_all_axes_scalar_out",
                            {random_tensor(DType::kF32, {2, 3, 2}, ++seed)},
                            {{"keepdims", 0}}));
  cases.push_back(with_constant_axes(
      make_case(op, "f32_noop_empty_axes",
                {random_tensor(DType::kF32, {2, 3}, ++seed), axes({})},
                {{"noop_with_empty_axes", 1}})));
  // Axes as a run-time input: inference knows only the rank.
  cases.push_back(
      make_case(op, "f32_runtime_axes",
                {random_tensor(DType::kF32, {4, 3}, ++seed), axes({0})}));
  cases.push_back(
      loosened(with_constant_axes(make_case(
                   op, "f16_axis0",
                   {random_tensor(DType::kF16, {6, 3}, ++seed), axes({0})})),
               5e-3));
  cases.push_back(with_constant_axes(
      make_case(op, "f64_axis1",
                {random_tensor(DType::kF64, {3, 9}, ++seed), axes({1})})));
  cases.push_back(with_constant_axes(make_case(
      op, "i32_axis1",
      {random_tensor(DType::kI32, {4, 5}, ++seed, -100, 100), axes({1})})));
  cases.push_back(make_case(
      op, "i64_all", {random_tensor(DType::kI64, {7}, ++seed, -1e9, 1e9)}));
  cases.push_back(with_constant_axes(expect_failure(
      make_case(op, "rejects_axis_out_of_range",
                {random_tensor(DType::kF32, {2, 3}, ++seed), axes({2})}))));
  cases.push_back(with_constant_axes(expect_failure(
      make_case(op, "rejects_repeated_axis",
                {random_tensor(DType::kF32, {2, 3}, ++seed), axes({1, -1})}))));
}

void add_cumsum_cases(std::vector<OpCase>& cases) {
  const char* op = "CumSum";
  auto axis = [](int64_t value) { return Tensor::scalar<int64_t>(value); };
  OpCase c = make_case(op, "f32_3x4_axis1",
                       {random_tensor(DType::kF32, {3, 4}, 1500), axis(1)});
  cases.push_back(with_constant_axes(c));
  cases.push_back(with_constant_axes(make_case(
      op, "f32_exclusive", {random_tensor(DType::kF32, {3, 4}, 1501), axis(0)},
      {{"exclusive", 1}})));
  cases.push_back(with_constant_axes(make_case(
      op, "f32_reverse", {random_tensor(DType::kF32, {2, 3, 5}, 1502), axis(2)},
      {{"reverse", 1}})));
  cases.push_back(with_constant_axes(
      make_case(op, "f32_reverse_exclusive_negative_axis",
                {random_tensor(DType::kF32, {2, 3, 5}, 1503), axis(-2)},
                {{"reverse", 1}, {"exclusive", 1}})));
  cases.push_back(make_case(
      op, "f64_runtime_i32_axis",
      {random_tensor(DType::kF64, {7}, 1504), Tensor::scalar<int32_t>(0)}));
  cases.push_back(with_constant_axes(
      make_case(op, "i32_axis0",
                {random_tensor(DType::kI32, {5, 2}, 1505, -50, 50), axis(0)})));
  cases.push_back(with_constant_axes(make_case(
      op, "i64_1x9",
      {random_tensor(DType::kI64, {1, 9}, 1506, -1e9, 1e9), axis(1)})));
  cases.push_back(loosened(
      with_constant_axes(make_case(
          op, "f16_6", {random_tensor(DType::kF16, {6}, 1507), axis(0)})),
      5e-3));
  cases.push_back(with_constant_axes(expect_failure(
      make_case(op, "rejects_axis_out_of_range",
                {random_tensor(DType::kF32, {2, 3}, 1508), axis(2)}))));
  cases.push_back(with_constant_axes(expect_failure(
      make_case(op, "rejects_u8",
                {random_tensor(DType::kU8, {4}, 1509, 0, 9), axis(0)}))));
}

void add_arg_reduce_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 1600;
  for (const char* op : {"ArgMax", "ArgMin"}) {
    cases.push_back(make_case(op, "f32_default_axis",
                              {random_tensor(DType::kF32, {4, 5}, ++seed)}));
    cases.push_back(make_case(op, "f32_negative_axis_drop",
                              {random_tensor(DType::kF32, {2, 3, 7}, ++seed)},
                              {{"axis", -1}, {"keepdims", 0}}));
    // Few distinct values, so that ties happen.
    cases.push_back(make_case(
        op, "i32_ties_first",
        {random_tensor(DType::kI32, {3, 6}, ++seed, 0, 3)}, {{"axis", 1}}));
    cases.push_back(make_case(
        op, "i64_ties_last", {random_tensor(DType::kI64, {6, 3}, ++seed, 0, 3)},
        {{"axis", 0}, {"select_last_index", 1}}));
    cases.push_back(make_case(op, "f16_rank1",
                              {random_tensor(DType::kF16, {9}, ++seed)},
                              {{"keepdims", 0}}));
    cases.push_back(make_case(
        op, "u8_middle_axis",
        {random_tensor(DType::kU8, {2, 5, 3}, ++seed, 0, 255)}, {{"axis", 1}}));
    cases.push_back(expect_failure(make_case(
        op, "rejects_axis_out_of_range",
        {random_tensor(DType::kF32, {2, 3}, ++seed)}, {{"axis", 2}})));
  }
}

}  // namespace

void add_reduce_cases(std::vector<OpCase>& cases) {
  add_reduce_op_cases(cases, "ReduceSum", 1400);
  add_reduce_op_cases(cases, "ReduceMean", 1420);
  add_reduce_op_cases(cases, "ReduceMax", 1440);
  add_reduce_op_cases(cases, "ReduceMin", 1460);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    cases.push_back(with_constant_axes(
        make_case(op, "bool_axis1",
                  {random_tensor(DType::kBool, {3, 4}, 1480), axes({1})})));
  }
  cases.push_back(make_case("ReduceSum", "u8_wraps",
                            {random_tensor(DType::kU8, {9}, 1481, 0, 255)}));
  cases.push_back(expect_failure(make_case(
      "ReduceMean", "rejects_bool", {random_tensor(DType::kBool, {3}, 1482)})));
  // f32 sizes the CPU backend runs on oneDNN's reduction primitive (Max
  // and Min from 16384 elements: backends/cpu/onednn/selection.cc).
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    for (int64_t axis : {-1, 1}) {
      // Sums of 64–80 f32 values round to a few 1e-6 on either path.
      cases.push_back(loosened(
          with_constant_axes(make_case(
              op, "f32_4x64x80_onednn_size_axis" + std::to_string(axis),
              {random_tensor(DType::kF32, {4, 64, 80}, 1490 + axis, -3, 3),
               axes({axis})})),
          1e-5));
    }
  }
  add_cumsum_cases(cases);
  add_arg_reduce_cases(cases);
}

}  // namespace seqrt
