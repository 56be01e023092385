// Conformance cases past a GPU's dispatch limit at its real size: more
// elements than 65,535 workgroups of 64 invocations cover in x
// (4,194,240), so element-wise and copy kernels spill into a second grid
// dimension, and every element is compared. (The lowered-limits run of
// the conformance suite, tests/conformance/CMakeLists.txt, reaches the
// same paths and the refusals past them at small sizes for every kernel.)
#include <cstdint>

#include "tests/conformance/op_case.h"

namespace seqrt {

namespace {

// Past 65,535 x 64, and not a multiple of 64: the last workgroup is partial.
constexpr int64_t kPastOneGridRow = 4325311;

Tensor f32(std::vector<int64_t> dims, uint64_t seed) {
  return random_tensor(DType::kF32, std::move(dims), seed);
}

}  // namespace

void add_dispatch_limit_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Add", "past_one_grid_row",
                            {f32({kPastOneGridRow}, 1), f32({1}, 2)}));
  cases.push_back(
      make_case("Relu", "past_one_grid_row", {f32({kPastOneGridRow}, 3)}));
  cases.push_back(make_case("Where", "past_one_grid_row",
                            {random_tensor(DType::kBool, {kPastOneGridRow}, 4),
                             f32({kPastOneGridRow}, 5), f32({1}, 6)}));
  // The relative-position Concat of a Conformer export, at 2 x 1100 x 2000.
  cases.push_back(make_case("Concat", "past_one_grid_row",
                            {f32({2, 1100, 1000}, 7), f32({2, 1100, 1000}, 8)},
                            {{"axis", int64_t{2}}}));
  cases.push_back(
      make_case("IsNaN", "past_one_grid_row", {f32({kPastOneGridRow}, 9)}));
  // Rows of 2000 gathered in reverse: 4.4M elements out.
  std::vector<int64_t> rows(2200);
  for (int64_t i = 0; i < 2200; ++i) rows[i] = 2199 - i;
  cases.push_back(make_case(
      "GatherND", "past_one_grid_row",
      {f32({2200, 2000}, 10), Tensor::from_vector<int64_t>({2200, 1}, rows)}));
}

}  // namespace seqrt
