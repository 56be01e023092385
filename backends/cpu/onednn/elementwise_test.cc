// oneDNN's eltwise (every unary op it runs) and binary primitives (same
// shapes, broadcast second operand, a broadcast first operand of Add
// swapped to second) against the reference kernels, through the CPU
// kernels with the oneDNN path forced.
#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/onednn/kernel_check.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::uniform;
using testing::expect_onednn_matches_reference;
using testing::expect_own_path_runs_no_primitive;

TEST(OneDnnEltwise, UnaryOpsMatchReference) {
  Tensor x = uniform({3, 5, 41}, 1, -4, 4);
  Tensor positive = uniform({3, 5, 41}, 2, 0.1, 4);
  for (const char* op :
       {"Relu", "Tanh", "Sigmoid", "Exp", "Abs", "Neg", "Softplus", "Gelu"}) {
    SCOPED_TRACE(op);
    expect_onednn_matches_reference(op, {x}, {}, 1e-5);
  }
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) {
    SCOPED_TRACE(op);
    expect_onednn_matches_reference(op, {positive}, {}, 1e-5);
  }
  expect_onednn_matches_reference("Gelu", {x},
                                  {{"approximate", std::string("tanh")}}, 1e-5);
  expect_own_path_runs_no_primitive("Tanh", {x}, {}, 1e-6);
}

TEST(OneDnnEltwise, WideInputsMatchReference) {
  // Saturation and overflow: softplus(x) = x for large x, exp overflows to
  // infinity, the sigmoid reaches 0 and 1.
  Tensor wide = uniform({4, 100}, 12, -100, 100);
  for (const char* op : {"Softplus", "Sigmoid", "Exp", "Gelu"}) {
    SCOPED_TRACE(op);
    expect_onednn_matches_reference(op, {wide}, {}, 1e-5);
  }
}

TEST(OneDnnBinary, BroadcastsMatchReference) {
  Tensor a = uniform({2, 6, 33}, 3);
  Tensor divisor = uniform({2, 6, 33}, 4, 0.5, 2);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    expect_onednn_matches_reference(op, {a, divisor}, {}, 1e-6);
    expect_onednn_matches_reference(op, {a, uniform({33}, 5, 0.5, 2)}, {},
                                    1e-6);
    expect_onednn_matches_reference(op, {a, uniform({6, 33}, 6, 0.5, 2)}, {},
                                    1e-6);
    expect_onednn_matches_reference(op, {a, uniform({1}, 12, 0.5, 2)}, {},
                                    1e-6);
  }
  // A broadcast first operand: Add swaps it to oneDNN's second.
  expect_onednn_matches_reference("Add", {uniform({6, 33}, 7), a}, {}, 1e-6);
  expect_own_path_runs_no_primitive("Mul", {a, divisor}, {}, 1e-6);
}

TEST(OneDnnBinary, FormsOneDnnCannotBroadcastFallBack) {
  ScopedPath forced(Path::kOneDnn);
  const int64_t before = execute_count();
  // Sub with its first operand broadcast, and both operands broadcast.
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "Sub", {uniform({33}, 8), uniform({4, 33}, 9)}, {}, 1e-6);
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "Add", {uniform({4, 1}, 10), uniform({1, 5}, 11)}, {}, 1e-6);
  // One value per row (oneDNN 2.6's slow reference path), either order.
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "Mul", {uniform({2, 6, 33}, 13), uniform({2, 6, 1}, 14)}, {},
      1e-6);
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "Add", {uniform({2, 6, 1}, 15), uniform({2, 6, 33}, 16)}, {},
      1e-6);
  EXPECT_EQ(execute_count(), before);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
