// The index-tuple ops. ScatterND and ScatterElements: slices and elements,
// every reduction, duplicate and negative indices, byte-moving dtypes
// (bool, f16) and the shapes real exports use (Mamba's conv_state[:, :,
// -1] = x, a mask row). GatherND: every k, batch_dims, int32 and negative
// indices, each element width, the attention-mask lookup of transformers'
// dynamo exports, and the bad-index errors.
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

Tensor rand(DType dtype, std::vector<int64_t> dims, uint64_t seed) {
  return random_tensor(dtype, std::move(dims), seed, -3.0, 3.0);
}

Tensor indices(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(std::move(dims), std::move(values));
}

// conv_state (B, C, K) with its last column set from x (B, C): the
// exporter's ScatterND takes every (b, c, K-1) index tuple.
OpCase last_column_case() {
  const int64_t b = 2, c = 5, k = 4;
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < c; ++j) idx.insert(idx.end(), {i, j, -1});
  }
  return make_case("ScatterND", "f32_last_column",
                   {rand(DType::kF32, {b, c, k}, 201), indices({b, c, 3}, idx),
                    rand(DType::kF32, {b, c}, 202)});
}

void add_scatter_nd_cases(std::vector<OpCase>& cases) {
  const char* op = "ScatterND";
  cases.push_back(last_column_case());
  cases.push_back(
      make_case(op, "f32_rows_add_duplicates",
                {rand(DType::kF32, {6, 7}, 203), indices({4, 1}, {1, -1, 1, 3}),
                 rand(DType::kF32, {4, 7}, 204)},
                {{"reduction", "add"}}));
  cases.push_back(make_case(
      op, "i64_elements_mul",
      {rand(DType::kI64, {3, 4}, 205), indices({3, 2}, {0, 0, 2, 3, 0, 0}),
       rand(DType::kI64, {3}, 206)},
      {{"reduction", "mul"}}));
  cases.push_back(
      make_case(op, "f16_blocks_max",
                {rand(DType::kF16, {3, 4, 5}, 207), indices({2, 1}, {2, 0}),
                 rand(DType::kF16, {2, 4, 5}, 208)},
                {{"reduction", "max"}}));
  cases.push_back(
      make_case(op, "i32_rows_min",
                {rand(DType::kI32, {4, 3}, 209), indices({2, 1}, {3, 3}),
                 rand(DType::kI32, {2, 3}, 210)},
                {{"reduction", "min"}}));
  cases.push_back(
      make_case(op, "bool_mask_row",
                {rand(DType::kBool, {1, 1, 4, 6}, 211),
                 indices({1, 3}, {0, 0, 2}), rand(DType::kBool, {1, 6}, 212)}));
  cases.push_back(expect_failure(
      make_case(op, "rejects_out_of_range",
                {rand(DType::kF32, {3, 2}, 213), indices({1, 1}, {3}),
                 rand(DType::kF32, {1, 2}, 214)})));
  cases.push_back(expect_failure(
      make_case(op, "rejects_updates_shape",
                {rand(DType::kF32, {3, 2}, 215), indices({1, 1}, {0}),
                 rand(DType::kF32, {1, 3}, 216)})));
}

void add_scatter_elements_cases(std::vector<OpCase>& cases) {
  const char* op = "ScatterElements";
  cases.push_back(
      make_case(op, "f32_axis1_add_duplicates",
                {rand(DType::kF32, {3, 5}, 221),
                 indices({3, 4}, {0, 4, 0, -1, 1, 1, 2, 3, -5, 0, 0, 2}),
                 rand(DType::kF32, {3, 4}, 222)},
                {{"axis", 1}, {"reduction", "add"}}));
  cases.push_back(make_case(
      op, "i32_axis0_none",
      {rand(DType::kI32, {4, 3}, 223), indices({2, 3}, {3, 0, 1, -1, 2, 0}),
       rand(DType::kI32, {2, 3}, 224)}));
  cases.push_back(make_case(op, "f16_axis_last_max",
                            {rand(DType::kF16, {2, 3, 6}, 225),
                             indices({2, 2, 2}, {5, 0, 1, 1, 0, 5, 2, 2}),
                             rand(DType::kF16, {2, 2, 2}, 226)},
                            {{"axis", -1}, {"reduction", "max"}}));
  cases.push_back(
      make_case(op, "i64_axis1_min",
                {rand(DType::kI64, {2, 4}, 227), indices({2, 2}, {3, 3, 0, 1}),
                 rand(DType::kI64, {2, 2}, 228)},
                {{"axis", 1}, {"reduction", "min"}}));
  cases.push_back(expect_failure(
      make_case(op, "rejects_out_of_range",
                {rand(DType::kF32, {2, 3}, 229), indices({1, 1}, {3}),
                 rand(DType::kF32, {1, 1}, 230)},
                {{"axis", 1}})));
}

void add_gather_nd_cases(std::vector<OpCase>& cases) {
  const char* op = "GatherND";
  cases.push_back(
      make_case(op, "f32_elements",
                {rand(DType::kF32, {4, 5}, 241),
                 indices({6, 2}, {0, 0, 3, 4, -1, -5, 2, 1, 1, 3, 0, 4})}));
  cases.push_back(make_case(
      op, "i64_rows_rank3_indices",
      {rand(DType::kI64, {5, 3}, 242), indices({2, 2, 1}, {4, 0, -2, 4})}));
  cases.push_back(
      make_case(op, "f16_blocks",
                {rand(DType::kF16, {3, 4, 5}, 243), indices({2, 1}, {2, 0})}));
  cases.push_back(
      make_case(op, "i32_indices_batch1",
                {rand(DType::kF32, {2, 3, 4}, 244),
                 Tensor::from_vector<int32_t>({2, 2, 1}, {2, 0, -1, 1})},
                {{"batch_dims", int64_t{1}}}));
  // attention_mask (batch, kv) read at (b, position) tuples, one per
  // query row: the bool mask lookup of a Llama export with dynamo=True.
  cases.push_back(make_case(
      op, "bool_mask_batch1",
      {rand(DType::kBool, {2, 9}, 245),
       indices({2, 7, 1}, {0, 1, 2, 3, 4, 5, 6, 8, 7, 6, 5, 4, 3, 2})},
      {{"batch_dims", int64_t{1}}}));
  cases.push_back(
      make_case(op, "f32_batch2_elements",
                {rand(DType::kF32, {2, 3, 4, 5}, 246),
                 indices({2, 3, 1, 2}, {0, 0, 3, 4, 1, 2, -1, -1, 2, 3, 0, 1})},
                {{"batch_dims", int64_t{2}}}));
  cases.push_back(expect_failure(
      make_case(op, "rejects_out_of_range",
                {rand(DType::kF32, {3, 2}, 247), indices({1, 2}, {0, 2})})));
  cases.push_back(expect_failure(
      make_case(op, "rejects_batch_dims_too_large",
                {rand(DType::kF32, {3, 2}, 248), indices({3, 1}, {0, 1, 0})},
                {{"batch_dims", int64_t{2}}})));
}

}  // namespace

void add_scatter_cases(std::vector<OpCase>& cases) {
  add_scatter_nd_cases(cases);
  add_scatter_elements_cases(cases);
  add_gather_nd_cases(cases);
}

}  // namespace seqrt
