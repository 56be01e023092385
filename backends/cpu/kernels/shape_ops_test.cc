// CPU kernels of Shape, Size, Constant, ConstantOfShape, Range, Cast and
// CastLike against the reference, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT
using op_testing::ints;

void expect_same(const std::string& op, const std::vector<Tensor>& inputs,
                 const AttrMap& attrs = {}, size_t num_outputs = 1) {
  auto want = run_kernel(false, kOnnxDomain, op, inputs, attrs, num_outputs);
  auto got = run_kernel(true, kOnnxDomain, op, inputs, attrs, num_outputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_TRUE((*got)[i].same_as((*want)[i])) << op << " output " << i;
  }
}

TEST(CpuShapeOps, ValuesAndCast) {
  Tensor x = uniform({2, 3, 4}, 13);
  expect_same("Shape", {x});
  expect_same("Shape", {x}, {{"start", int64_t{1}}, {"end", int64_t{-1}}});
  expect_same("Size", {x});
  expect_same("Constant", {}, {{"value_ints", std::vector<int64_t>{1, 2}}});
  expect_same("ConstantOfShape", {ints({2, 3})},
              {{"value", Tensor::from_vector<int64_t>({1}, {7})}});
  expect_same("Range",
              {Tensor::scalar<int64_t>(10), Tensor::scalar<int64_t>(-3),
               Tensor::scalar<int64_t>(-4)});
  expect_same("Range", {Tensor::scalar<float>(0.5f), Tensor::scalar<float>(3),
                        Tensor::scalar<float>(0.3f)});
  Tensor wide = uniform({50}, 14, -1e10, 1e10);
  for (int64_t to : {1, 6, 7, 9, 10, 16}) {  // f32 i32 i64 bool f16 bf16
    expect_same("Cast", {wide}, {{"to", to}});
  }
  expect_same("Cast", {op_testing::i64({3}, {-1, 0, 1 << 20})},
              {{"to", int64_t{1}}});
}

// Every pair of dtypes, on values that reach each conversion rule: NaN,
// infinities, out-of-range values that saturate or wrap, negative zero.
TEST(CpuShapeOps, CastEveryDtypePair) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0,    -0.0,  1.5,   -1.5,        127.7,
                                -129.0, 255.9, 300.0, 7e9,         -7e9,
                                1e20,   inf,   -inf,  std::nan("")};
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16,
                          DType::kF64, DType::kI8,  DType::kU8,
                          DType::kI32, DType::kI64, DType::kBool};
  for (DType from : dtypes) {
    Tensor x =
        Tensor::allocate(from, {static_cast<int64_t>(values.size())}).value();
    for (size_t i = 0; i < values.size(); ++i) {
      if (is_float(from)) {
        x.set_element_f64(static_cast<int64_t>(i), values[i]);
      } else {  // wrap into the dtype, as integer inputs would
        double v = std::fabs(values[i]) < 9e18 ? values[i] : 0.0;
        x.set_element_i64(static_cast<int64_t>(i), static_cast<int64_t>(v));
      }
    }
    for (DType to : dtypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " to " + dtype_name(to));
      Tensor like = Tensor::allocate(to, {1}).value();
      expect_same("CastLike", {x, like});
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
