// Deadlines, cancellation and the loop limit through the C API: a run
// stopped by seqrt_session_cancel from another thread is SEQRT_CANCELLED,
// one past SEQRT_LIMIT_RUN_TIMEOUT_MS is SEQRT_DEADLINE_EXCEEDED, a Loop past
// SEQRT_LIMIT_MAX_LOOP_ITERATIONS is SEQRT_LIMIT_EXCEEDED, each with a
// one-line message; the session runs correctly afterwards. (The C++
// wrapper's codes: cpp_api_test.cc.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

class CApiRunControl : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<uint8_t> bytes = loop_model_bytes();
    ASSERT_EQ(seqrt_model_load_memory(bytes.data(), bytes.size(), &model_),
              SEQRT_OK)
        << seqrt_last_error_message();
    ASSERT_EQ(seqrt_session_options_create(&options_), SEQRT_OK);
    ASSERT_EQ(seqrt_session_options_set_threads(options_, 1), SEQRT_OK);
  }
  void TearDown() override {
    seqrt_session_release(session_);
    seqrt_session_options_release(options_);
    seqrt_model_release(model_);
  }

  void create() {
    seqrt_session_release(session_);
    session_ = nullptr;
    ASSERT_EQ(seqrt_session_create(model_, options_, &session_), SEQRT_OK)
        << seqrt_last_error_message();
  }

  // One run with trip count `m`; v_final[0] into `*value` on success.
  seqrt_status run(int64_t m, float* value) {
    seqrt_tensor* m_tensor = nullptr;
    seqrt_tensor* v0 = nullptr;
    const int64_t dims[] = {2};
    const float zeros[2] = {0, 0};
    EXPECT_EQ(seqrt_tensor_create(SEQRT_DTYPE_I64, nullptr, 0, &m, sizeof m,
                                  &m_tensor),
              SEQRT_OK);
    EXPECT_EQ(
        seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 1, zeros, sizeof zeros, &v0),
        SEQRT_OK);
    const char* in_names[] = {"m", "v0"};
    const seqrt_tensor* inputs[] = {m_tensor, v0};
    const char* out_names[] = {"v_final"};
    seqrt_tensor* out = nullptr;
    seqrt_status status =
        seqrt_session_run(session_, in_names, inputs, 2, out_names, &out, 1);
    if (status == SEQRT_OK) {
      const void* values = nullptr;
      EXPECT_EQ(seqrt_tensor_data(out, &values), SEQRT_OK);
      *value = static_cast<const float*>(values)[0];
    }
    seqrt_tensor_release(out);
    seqrt_tensor_release(v0);
    seqrt_tensor_release(m_tensor);
    return status;
  }

  void expect_runs_correctly() {
    float value = 0;
    ASSERT_EQ(run(5, &value), SEQRT_OK) << seqrt_last_error_message();
    EXPECT_EQ(value, 5.0f);
  }

  seqrt_model* model_ = nullptr;
  seqrt_session_options* options_ = nullptr;
  seqrt_session* session_ = nullptr;
};

std::string last_message() { return seqrt_last_error_message(); }

bool one_line_with(const std::string& message, const std::string& part) {
  return message.find('\n') == std::string::npos &&
         message.find(part) != std::string::npos;
}

TEST_F(CApiRunControl, StatusNames) {
  EXPECT_STREQ(seqrt_status_name(SEQRT_CANCELLED), "cancelled");
  EXPECT_STREQ(seqrt_status_name(SEQRT_DEADLINE_EXCEEDED), "deadline exceeded");
  EXPECT_EQ(seqrt_session_cancel(nullptr), SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(
      seqrt_session_options_set_limit(options_, SEQRT_LIMIT_RUN_TIMEOUT_MS, -1),
      SEQRT_INVALID_ARGUMENT);
}

TEST_F(CApiRunControl, CancelFromAnotherThreadStopsTheRun) {
  ASSERT_EQ(seqrt_session_options_set_limit(
                options_, SEQRT_LIMIT_MAX_LOOP_ITERATIONS, kLoopHugeTrips),
            SEQRT_OK);
  create();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(seqrt_session_cancel(session_), SEQRT_OK);
  });
  float value = 0;
  const seqrt_status status = run(kLoopHugeTrips, &value);
  canceller.join();
  EXPECT_EQ(status, SEQRT_CANCELLED);
  EXPECT_TRUE(one_line_with(last_message(), "run cancelled")) << last_message();
  expect_runs_correctly();
}

TEST_F(CApiRunControl, ATimeoutStopsTheRun) {
  ASSERT_EQ(seqrt_session_options_set_limit(
                options_, SEQRT_LIMIT_MAX_LOOP_ITERATIONS, kLoopHugeTrips),
            SEQRT_OK);
  ASSERT_EQ(seqrt_session_options_set_limit(options_,
                                            SEQRT_LIMIT_RUN_TIMEOUT_MS, 100),
            SEQRT_OK);
  create();
  float value = 0;
  EXPECT_EQ(run(kLoopHugeTrips, &value), SEQRT_DEADLINE_EXCEEDED);
  EXPECT_TRUE(one_line_with(last_message(), "deadline of 100 ms exceeded"))
      << last_message();
  expect_runs_correctly();
}

TEST_F(CApiRunControl, TheLoopLimitNamesTheNode) {
  ASSERT_EQ(seqrt_session_options_set_limit(
                options_, SEQRT_LIMIT_MAX_LOOP_ITERATIONS, 10),
            SEQRT_OK);
  create();
  float value = 0;
  EXPECT_EQ(run(kLoopHugeTrips, &value), SEQRT_LIMIT_EXCEEDED);
  EXPECT_TRUE(one_line_with(last_message(), "[Loop] node 'loop0'"))
      << last_message();
  EXPECT_TRUE(one_line_with(last_message(), "--max-loop-iterations"))
      << last_message();
  expect_runs_correctly();
}

}  // namespace
}  // namespace c_api_test
