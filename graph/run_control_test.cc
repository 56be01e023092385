#include "graph/run_control.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "graph/tensor.h"

namespace seqrt {
namespace {

std::string subject() { return "t"; }

TEST(RunControl, AllocationsMeetTheTensorLimitsAndTheBudget) {
  Limits limits;
  limits.max_tensor_elements = 100;
  limits.max_tensor_bytes = 256;
  limits.memory_budget_bytes = 1000;
  RunControl control(limits);
  EXPECT_TRUE(
      control.check_allocation(DType::kF32, {8, 8}, true, subject).is_ok());
  Status elements =
      control.check_allocation(DType::kF32, {10, 11}, false, subject);
  EXPECT_EQ(elements.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(elements.message().find("t of shape (10,11) needs 110 elements"),
            std::string::npos)
      << elements.message();
  Status bytes = control.check_allocation(DType::kF64, {40}, false, subject);
  EXPECT_NE(bytes.message().find("above max_tensor_bytes"), std::string::npos)
      << bytes.message();

  // Run-time-sized tensors count with what the plan and the run hold;
  // planned ones are in the plan's estimate already.
  control.set_planned_bytes(600);
  Result<HeldBytes> held = control.hold(300, subject);
  ASSERT_TRUE(held.is_ok());
  EXPECT_EQ(control.held_bytes(), 300);
  EXPECT_EQ(control.check_allocation(DType::kF32, {50}, true, subject).code(),
            StatusCode::kLimitExceeded);
  EXPECT_TRUE(
      control.check_allocation(DType::kF32, {50}, false, subject).is_ok());
  EXPECT_FALSE(control.hold(101, subject).is_ok());
  HeldBytes moved = std::move(held).value();
  EXPECT_EQ(control.held_bytes(), 300);
  moved.reset();
  EXPECT_EQ(control.held_bytes(), 0);
  EXPECT_TRUE(
      control.check_allocation(DType::kF32, {50}, true, subject).is_ok());
}

TEST(RunControl, CancelStopsOnlyRunsStartedBeforeIt) {
  std::atomic<uint64_t> generation{0};
  RunControl before(Limits{});
  before.watch_cancel(&generation);
  EXPECT_FALSE(before.should_stop());
  generation.fetch_add(1);
  RunControl after(Limits{});
  after.watch_cancel(&generation);
  EXPECT_TRUE(before.should_stop());
  Status stopped = before.check_stop("after node 'x'");
  EXPECT_EQ(stopped.code(), StatusCode::kCancelled);
  EXPECT_EQ(stopped.message(), "run cancelled after node 'x'");
  EXPECT_TRUE(is_stopped_run(stopped));
  EXPECT_FALSE(after.should_stop());
  EXPECT_TRUE(after.check_stop("here").is_ok());
}

TEST(RunControl, ADeadlinePasses) {
  Limits limits;
  limits.run_timeout_ms = 20;
  RunControl control(limits);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  Status late = control.check_stop("after node 'x'");
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.message().find("deadline of 20 ms exceeded after node 'x'"),
            std::string::npos)
      << late.message();
  control.set_timeout_ms(0);  // none
  EXPECT_TRUE(control.check_stop("x").is_ok());
}

TEST(RunControl, TheScopeLimitsTensorAllocateOnThisThreadOnly) {
  Limits limits;
  limits.max_tensor_bytes = 64;
  RunControl control(limits);
  {
    RunControl::Scope scope(&control);
    EXPECT_EQ(RunControl::current(), &control);
    Result<Tensor> big = Tensor::allocate(DType::kF32, {100});
    ASSERT_FALSE(big.is_ok());
    EXPECT_NE(big.status().message().find(
                  "a f32 tensor of shape (100) needs 400 B, above "
                  "max_tensor_bytes (64 B)"),
              std::string::npos)
        << big.status().message();
    std::thread other([] {
      EXPECT_EQ(RunControl::current(), nullptr);
      EXPECT_TRUE(Tensor::allocate(DType::kF32, {100}).is_ok());
    });
    other.join();
  }
  EXPECT_EQ(RunControl::current(), nullptr);
  EXPECT_TRUE(Tensor::allocate(DType::kF32, {100}).is_ok());
}

}  // namespace
}  // namespace seqrt
