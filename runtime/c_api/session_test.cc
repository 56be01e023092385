// seqrt_session_*: options, compile errors, run errors that name what was
// wrong, borrowed inputs, the memory plan, and runs from several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

class CApiSession : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_retention_model();
    ASSERT_NE(model_, nullptr);
    ASSERT_EQ(seqrt_session_options_create(&options_), SEQRT_OK);
  }
  void TearDown() override {
    seqrt_session_release(session_);
    seqrt_session_options_release(options_);
    seqrt_model_release(model_);
  }

  seqrt_status create() {
    return seqrt_session_create(model_, options_, &session_);
  }

  // One run of x over positions [0, n); y's values, or empty on failure.
  std::vector<float> run_y(const seqrt_session* session, int64_t n) {
    seqrt_tensor* x = x_tensor(0, n);
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    const seqrt_tensor* feeds[] = {x};
    seqrt_tensor* y = nullptr;
    std::vector<float> values;
    if (seqrt_session_run(session, in, feeds, 1, out, &y, 1) == SEQRT_OK) {
      values = floats(y);
    }
    seqrt_tensor_release(y);
    seqrt_tensor_release(x);
    return values;
  }

  seqrt_model* model_ = nullptr;
  seqrt_session_options* options_ = nullptr;
  seqrt_session* session_ = nullptr;
};

TEST_F(CApiSession, RunsOnEveryBackendAlike) {
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "reference"), SEQRT_OK);
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  std::vector<float> want = run_y(session_, 5);
  ASSERT_EQ(want.size(), static_cast<size_t>(kHeads * 5 * kDim));
  const char* name = nullptr;
  ASSERT_EQ(seqrt_session_backend_name(session_, &name), SEQRT_OK);
  EXPECT_STREQ(name, "reference");

  seqrt_session* cpu = nullptr;
  ASSERT_EQ(seqrt_session_create(model_, nullptr, &cpu), SEQRT_OK)
      << seqrt_last_error_message();
  ASSERT_EQ(seqrt_session_device_name(cpu, &name), SEQRT_OK);
  EXPECT_NE(std::string(name), "");
  std::vector<float> got = run_y(cpu, 5);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4);
  seqrt_session_release(cpu);
}

// A backend list: each node on the first backend that runs it (the
// reference backend runs all here), the same answer as one backend.
TEST_F(CApiSession, ABackendListRunsAlike) {
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "reference,cpu"),
            SEQRT_OK);
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  const char* name = nullptr;
  ASSERT_EQ(seqrt_session_backend_name(session_, &name), SEQRT_OK);
  EXPECT_STREQ(name, "reference,cpu");
  std::vector<float> got = run_y(session_, 5);
  seqrt_session* cpu = nullptr;
  ASSERT_EQ(seqrt_session_create(model_, nullptr, &cpu), SEQRT_OK);
  std::vector<float> want = run_y(cpu, 5);
  seqrt_session_release(cpu);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4);
}

TEST_F(CApiSession, ABadBackendListIsNamed) {
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "cpu,,reference"),
            SEQRT_OK);
  EXPECT_EQ(create(), SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("empty name")) << seqrt_last_error_message();
}

TEST_F(CApiSession, UnknownBackendIsNotFoundListingTheBackends) {
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "tpu"), SEQRT_OK);
  EXPECT_EQ(create(), SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("tpu")) << seqrt_last_error_message();
  EXPECT_TRUE(message_has("reference"));
  EXPECT_EQ(session_, nullptr);
}

TEST_F(CApiSession, OtherDevicesAreUnsupported) {
  ASSERT_EQ(seqrt_session_options_set_device_index(options_, 1), SEQRT_OK);
  EXPECT_EQ(create(), SEQRT_UNSUPPORTED);
  EXPECT_TRUE(message_has("device index 1"));
  EXPECT_EQ(seqrt_session_options_set_device_index(options_, -1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_session_options_set_threads(options_, -2),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_session_options_bind_dim(options_, "seq", -1),
            SEQRT_INVALID_ARGUMENT);
}

TEST_F(CApiSession, BackendOptionsAreCheckedAndReachTheBackend) {
  ASSERT_EQ(seqrt_session_options_set_backend(options_, "cpu"), SEQRT_OK);
  // A key no backend takes, and malformed values, fail when set.
  EXPECT_EQ(seqrt_session_options_set_backend_option(options_, "devcie", "1"),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("no backend of this build takes option 'devcie'"))
      << seqrt_last_error_message();
  EXPECT_TRUE(message_has("device"));
  EXPECT_EQ(seqrt_session_options_set_backend_option(options_, "device", "x"),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("backend option device must be a device index"));
  EXPECT_EQ(seqrt_session_options_set_backend_option(options_, "fp16_weights",
                                                     "perhaps"),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_session_options_set_backend_option(options_, nullptr, "1"),
            SEQRT_INVALID_ARGUMENT);
  // A key the chosen backend does not take fails at creation, by name.
  ASSERT_EQ(
      seqrt_session_options_set_backend_option(options_, "fp16_weights", "1"),
      SEQRT_OK);
  EXPECT_EQ(create(), SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(
      message_has("cpu backend: no option 'fp16_weights'; it takes: "
                  "device"))
      << seqrt_last_error_message();
  EXPECT_EQ(session_, nullptr);
  // A device the backend has is used.
  seqrt_session_options_release(options_);
  ASSERT_EQ(seqrt_session_options_create(&options_), SEQRT_OK);
  ASSERT_EQ(seqrt_session_options_set_backend_option(options_, "device", "0"),
            SEQRT_OK);
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  EXPECT_FALSE(run_y(session_, 3).empty());
}

TEST_F(CApiSession, WrongFeedNameDtypeOrShapeNamesTheProblem) {
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  seqrt_tensor* x = x_tensor(0, 3);
  const seqrt_tensor* feeds[] = {x};
  const char* out[] = {"y"};
  seqrt_tensor* y = nullptr;
  const char* wrong_name[] = {"z"};
  EXPECT_EQ(seqrt_session_run(session_, wrong_name, feeds, 1, out, &y, 1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("'z'")) << seqrt_last_error_message();

  const char* in[] = {"x"};
  int64_t dims[4] = {1, kHeads, 3, kDim};
  seqrt_tensor* ints = nullptr;
  ASSERT_EQ(seqrt_tensor_create(SEQRT_DTYPE_I32, dims, 4, nullptr, 0, &ints),
            SEQRT_OK);
  const seqrt_tensor* int_feeds[] = {ints};
  EXPECT_EQ(seqrt_session_run(session_, in, int_feeds, 1, out, &y, 1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("i32")) << seqrt_last_error_message();

  int64_t bad_dims[4] = {1, kHeads + 1, 3, kDim};
  seqrt_tensor* bad = nullptr;
  ASSERT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, bad_dims, 4, nullptr, 0, &bad),
            SEQRT_OK);
  const seqrt_tensor* bad_feeds[] = {bad};
  EXPECT_EQ(seqrt_session_run(session_, in, bad_feeds, 1, out, &y, 1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("'x'")) << seqrt_last_error_message();

  const char* twice[] = {"x", "x"};
  const seqrt_tensor* two[] = {x, x};
  EXPECT_EQ(seqrt_session_run(session_, twice, two, 2, out, &y, 1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("fed twice"));

  const char* unknown_out[] = {"logits"};
  EXPECT_EQ(seqrt_session_run(session_, in, feeds, 1, unknown_out, &y, 1),
            SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("no output 'logits'"));
  EXPECT_TRUE(message_has("y"));
  EXPECT_EQ(y, nullptr);
  seqrt_tensor_release(bad);
  seqrt_tensor_release(ints);
  seqrt_tensor_release(x);
}

TEST_F(CApiSession, BorrowedInputIsReadInPlace) {
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  std::vector<float> values(kHeads * 3 * kDim, 0.0f);
  int64_t dims[4] = {1, kHeads, 3, kDim};
  seqrt_tensor* x = nullptr;
  ASSERT_EQ(seqrt_tensor_borrow(SEQRT_DTYPE_F32, dims, 4, values.data(),
                                values.size() * sizeof(float), &x),
            SEQRT_OK);
  const void* data = nullptr;
  ASSERT_EQ(seqrt_tensor_data(x, &data), SEQRT_OK);
  EXPECT_EQ(data, values.data());
  // Filled after borrowing: the run sees these values, so none was copied.
  std::vector<float> wanted = x_values(0, 3);
  std::copy(wanted.begin(), wanted.end(), values.begin());
  const char* in[] = {"x"};
  const char* out[] = {"y"};
  const seqrt_tensor* feeds[] = {x};
  seqrt_tensor* y = nullptr;
  ASSERT_EQ(seqrt_session_run(session_, in, feeds, 1, out, &y, 1), SEQRT_OK);
  EXPECT_EQ(floats(y), run_y(session_, 3));
  EXPECT_EQ(values, wanted);  // the run did not write it
  seqrt_tensor_release(y);
  seqrt_tensor_release(x);
}

TEST_F(CApiSession, RunsFromFourThreadsGiveTheSerialResult) {
  ASSERT_EQ(seqrt_session_options_set_threads(options_, 1), SEQRT_OK);
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  std::vector<float> serial = run_y(session_, 6);
  ASSERT_FALSE(serial.empty());
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int repeat = 0; repeat < 5; ++repeat) {
        results[i] = run_y(session_, 6);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::vector<float>& result : results) EXPECT_EQ(result, serial);
}

TEST_F(CApiSession, ThreadCountDoesNotChangeResults) {
  ASSERT_EQ(seqrt_session_options_set_threads(options_, 2), SEQRT_OK);
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  seqrt_session* one = nullptr;
  ASSERT_EQ(seqrt_session_options_set_threads(options_, 1), SEQRT_OK);
  ASSERT_EQ(seqrt_session_create(model_, options_, &one), SEQRT_OK);
  std::vector<float> a = run_y(session_, 7), b = run_y(one, 7);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5);
  seqrt_session_release(one);
}

TEST_F(CApiSession, ReportsTheMemoryPlanForABinding) {
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  const char* names[] = {"seq"};
  int64_t sizes[] = {16};
  int64_t peak = -1, naive = -1;
  ASSERT_EQ(seqrt_session_memory_plan(session_, names, sizes, 1, &peak, &naive),
            SEQRT_OK)
      << seqrt_last_error_message();
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, naive);
  int64_t longer_peak = -1;
  sizes[0] = 64;
  ASSERT_EQ(seqrt_session_memory_plan(session_, names, sizes, 1, &longer_peak,
                                      &naive),
            SEQRT_OK);
  EXPECT_GT(longer_peak, peak);
  EXPECT_NE(
      seqrt_session_memory_plan(session_, nullptr, nullptr, 0, &peak, &naive),
      SEQRT_OK);  // seq left unbound
  EXPECT_TRUE(message_has("seq")) << seqrt_last_error_message();
}

TEST_F(CApiSession, ModelMayBeReleasedFirst) {
  ASSERT_EQ(create(), SEQRT_OK) << seqrt_last_error_message();
  seqrt_model_release(model_);
  model_ = nullptr;
  EXPECT_EQ(run_y(session_, 2).size(), static_cast<size_t>(kHeads * 2 * kDim));
}

}  // namespace
}  // namespace c_api_test
