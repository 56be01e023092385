// Failure paths through the C API: out of memory at any host allocation of a
// run, a node the backend lacks and a limit reached each come back as a status
// and a one-line message, never a crash, and the session (and others) keep
// working.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/builder.h"
#include "importers/native/writer.h"
#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

bool one_line(const std::string& message) {
  return !message.empty() && message.find('\n') == std::string::npos;
}

class CApiFailurePaths : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_retention_model();
    ASSERT_NE(model_, nullptr);
    ASSERT_EQ(seqrt_session_options_create(&options_), SEQRT_OK);
    ASSERT_EQ(seqrt_session_options_set_threads(options_, 1), SEQRT_OK);
  }
  void TearDown() override {
    seqrt_testing_fail_host_allocation(0);
    seqrt_session_options_release(options_);
    seqrt_model_release(model_);
  }

  // y of one run on positions [0, 3), or SEQRT_* of the failure.
  // Arms the allocation hook with `fail_nth` (0: not) once the input is
  // made, and disarms it after the run.
  static seqrt_status run(const seqrt_session* session,
                          std::vector<float>* y_values, int fail_nth = 0) {
    seqrt_tensor* x = x_tensor(0, 3);
    seqrt_testing_fail_host_allocation(fail_nth);
    const char* in_names[] = {"x"};
    const char* out_names[] = {"y"};
    const seqrt_tensor* inputs[] = {x};
    seqrt_tensor* y = nullptr;
    seqrt_status status =
        seqrt_session_run(session, in_names, inputs, 1, out_names, &y, 1);
    seqrt_testing_fail_host_allocation(0);
    if (status == SEQRT_OK) *y_values = floats(y);
    seqrt_tensor_release(y);
    seqrt_tensor_release(x);
    return status;
  }

  seqrt_model* model_ = nullptr;
  seqrt_session_options* options_ = nullptr;
};

TEST_F(CApiFailurePaths, OutOfMemoryAtEachAllocationIsAStatus) {
  for (const char* backend : {"reference", "cpu"}) {
    SCOPED_TRACE(backend);
    ASSERT_EQ(seqrt_session_options_set_backend(options_, backend), SEQRT_OK);
    seqrt_session* session = nullptr;
    seqrt_session* other = nullptr;
    ASSERT_EQ(seqrt_session_create(model_, options_, &session), SEQRT_OK)
        << seqrt_last_error_message();
    ASSERT_EQ(seqrt_session_create(model_, options_, &other), SEQRT_OK);
    std::vector<float> expected, got;
    ASSERT_EQ(run(session, &expected), SEQRT_OK) << seqrt_last_error_message();
    int failures = 0;
    for (int nth = 1; nth <= 40; ++nth) {
      seqrt_status status = run(session, &got, nth);
      if (status == SEQRT_OK) continue;
      ++failures;
      const std::string message = seqrt_last_error_message();
      EXPECT_EQ(status, SEQRT_OUT_OF_MEMORY) << nth << ": " << message;
      EXPECT_TRUE(one_line(message)) << message;
      ASSERT_EQ(run(session, &got), SEQRT_OK) << seqrt_last_error_message();
      EXPECT_EQ(got, expected);
      ASSERT_EQ(run(other, &got), SEQRT_OK) << seqrt_last_error_message();
      EXPECT_EQ(got, expected);
    }
    EXPECT_GT(failures, 0);
    seqrt_session_release(other);
    seqrt_session_release(session);
  }
}

TEST_F(CApiFailurePaths, LimitsAreSetAndReportedByName) {
  EXPECT_EQ(seqrt_session_options_set_limit(options_, SEQRT_LIMIT_MAX_NODES, 0),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_session_options_set_limit(options_,
                                            static_cast<seqrt_limit>(99), 1),
            SEQRT_INVALID_ARGUMENT);
  ASSERT_EQ(seqrt_session_options_set_limit(options_, SEQRT_LIMIT_MAX_NODES, 2),
            SEQRT_OK);
  seqrt_session* session = nullptr;
  EXPECT_EQ(seqrt_session_create(model_, options_, &session),
            SEQRT_LIMIT_EXCEEDED);
  const std::string message = seqrt_last_error_message();
  EXPECT_NE(message.find("above max_nodes (2 nodes); raise it with "
                         "--max-nodes"),
            std::string::npos)
      << message;
  EXPECT_TRUE(one_line(message));

  ASSERT_EQ(
      seqrt_session_options_set_limit(options_, SEQRT_LIMIT_MAX_NODES, 1000),
      SEQRT_OK);
  ASSERT_EQ(
      seqrt_session_options_set_limit(options_, SEQRT_LIMIT_MEMORY_BUDGET, 64),
      SEQRT_OK);
  EXPECT_EQ(seqrt_session_create(model_, options_, &session),
            SEQRT_LIMIT_EXCEEDED);
  EXPECT_NE(std::string(seqrt_last_error_message()).find("memory_budget"),
            std::string::npos);
}

TEST_F(CApiFailurePaths, ANodeTheBackendLacksIsUnsupportedNamingIt) {
  // CausalConvWithState in f64: the CPU backend computes it in f32/f16/bf16.
  seqrt::GraphBuilder b("f64_conv");
  seqrt::ValueId x = b.input("x", seqrt::DType::kF64, {1, 2, 4});
  seqrt::ValueId w = b.constant(
      "w", seqrt::Tensor::from_vector<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  seqrt::NodeOptions node;
  node.name = "conv";
  b.output(b.add("CausalConvWithState", {x, w}, {}, node), "y");
  seqrt::Result<seqrt::Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  seqrt::Result<std::vector<uint8_t>> bytes = seqrt::write_seqrt_buffer(*graph);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  seqrt_model* model = nullptr;
  ASSERT_EQ(seqrt_model_load_memory(bytes->data(), bytes->size(), &model),
            SEQRT_OK)
      << seqrt_last_error_message();
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "cpu"), SEQRT_OK);
  seqrt_session* session = nullptr;
  EXPECT_EQ(seqrt_session_create(model, options_, &session), SEQRT_UNSUPPORTED);
  const std::string message = seqrt_last_error_message();
  EXPECT_NE(message.find("[CausalConvWithState] node 'conv'"),
            std::string::npos)
      << message;
  EXPECT_TRUE(one_line(message)) << message;
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "reference"), SEQRT_OK);
  EXPECT_EQ(seqrt_session_create(model, options_, &session), SEQRT_OK)
      << seqrt_last_error_message();
  seqrt_session_release(session);
  seqrt_model_release(model);
}

}  // namespace
}  // namespace c_api_test
