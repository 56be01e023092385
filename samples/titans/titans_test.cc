#include "samples/titans/titans.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/reference/reference_backend.h"

namespace seqrt::titans {
namespace {

Tensor random_x(uint64_t seed) {
  Tensor x = Tensor::allocate(DType::kF32, {kBatch, kSeq, kModel}).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.set_element_f64(i, dist(rng));
  }
  return x;
}

class TitansBlock : public ::testing::TestWithParam<Variant> {};

TEST_P(TitansBlock, ShapesFinitenessAndCausality) {
  Result<Graph> graph = build_titans_block(GetParam(), 7);
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  Tensor x = random_x(1);
  auto out = run_reference_graph(*graph, {x});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{kBatch, kSeq, kModel}));
  double spread = 0;
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    ASSERT_TRUE(std::isfinite(y.element_f64(i))) << "element " << i;
    spread += std::abs(y.element_f64(i) - x.element_f64(i));
  }
  EXPECT_GT(spread, 1e-3);  // the block does something beyond the residual

  // Changing tokens from `cut` on (mid-segment for MAC, and at a segment
  // start) leaves every earlier output exactly as it was.
  for (int64_t cut : {kSegment + 3, 2 * kSegment}) {
    Tensor changed = x.clone();
    Tensor other = random_x(2);
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t i = (b * kSeq + cut) * kModel; i < (b + 1) * kSeq * kModel;
           ++i) {
        changed.set_element_f64(i, other.element_f64(i));
      }
    }
    auto moved = run_reference_graph(*graph, {changed});
    ASSERT_TRUE(moved.is_ok()) << moved.status().to_string();
    double later = 0;
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t t = 0; t < kSeq; ++t) {
        for (int64_t c = 0; c < kModel; ++c) {
          int64_t i = (b * kSeq + t) * kModel + c;
          double diff = std::abs((*moved)[0].element_f64(i) - y.element_f64(i));
          if (t < cut) {
            ASSERT_EQ(diff, 0.0) << "output at t=" << t << " changed with "
                                 << "inputs from t=" << cut;
          } else {
            later += diff;
          }
        }
      }
    }
    EXPECT_GT(later, 1e-3) << "outputs after the cut should change";
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, TitansBlock,
                         ::testing::Values(Variant::kMac, Variant::kMag,
                                           Variant::kMal),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(variant_name(info.param));
                         });

}  // namespace
}  // namespace seqrt::titans
