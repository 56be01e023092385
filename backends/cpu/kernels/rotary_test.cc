// RotaryEmbedding against the reference kernel: 3-D and 4-D X, with and
// without position_ids, interleaved pairs, a partial rotary_dim, f16 and
// f64, and positions outside the caches.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuRotary, FormsMatchReference) {
  Tensor x4 = uniform({2, 3, 5, 8}, 1);  // batch, heads, seq, head_size
  Tensor x3 = uniform({2, 5, 24}, 2);    // batch, seq, heads * head_size
  Tensor positions = uniform({2, 5}, 3, 0, 10, DType::kI64);
  for (int64_t interleaved : {0, 1}) {
    for (int64_t rotary : {0, 4}) {
      SCOPED_TRACE("interleaved " + std::to_string(interleaved) + " rotary " +
                   std::to_string(rotary));
      int64_t half = (rotary == 0 ? 8 : rotary) / 2;
      AttrMap attrs = {{"interleaved", interleaved},
                       {"rotary_embedding_dim", rotary}};
      Tensor cos = uniform({10, half}, 4), sin = uniform({10, half}, 5);
      expect_matches_reference(kOnnxDomain, "RotaryEmbedding",
                               {x4, cos, sin, positions}, attrs, 1e-6);
      Tensor cos_bs = uniform({2, 5, half}, 6),
             sin_bs = uniform({2, 5, half}, 7);
      attrs["num_heads"] = int64_t{3};
      expect_matches_reference(kOnnxDomain, "RotaryEmbedding",
                               {x3, cos_bs, sin_bs}, attrs, 1e-6);
    }
  }
}

TEST(CpuRotary, OtherDtypesAndBadPositions) {
  for (DType dtype : {DType::kF16, DType::kF64}) {
    expect_matches_reference(kOnnxDomain, "RotaryEmbedding",
                             {uniform({1, 2, 3, 4}, 8, -1, 1, dtype),
                              uniform({1, 3, 2}, 9, -1, 1, dtype),
                              uniform({1, 3, 2}, 10, -1, 1, dtype)},
                             {}, dtype == DType::kF16 ? 2e-3 : 1e-12);
  }
  auto out = run_cpu("RotaryEmbedding",
                     {uniform({1, 1, 2, 4}, 11), uniform({3, 2}, 12),
                      uniform({3, 2}, 13), op_testing::i64({1, 2}, {0, 3})});
  op_testing::expect_error(out.status(), {"[RotaryEmbedding]", "outside"});
}

}  // namespace
}  // namespace seqrt::cpu
