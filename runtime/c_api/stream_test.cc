// seqrt_stream_*: prefill then steps equals one run over the whole sequence,
// snapshot/restore equals a replay, state outputs stay inside the stream.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

constexpr int64_t kPrompt = 3, kTotal = 7;

class CApiStream : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_retention_model();
    ASSERT_NE(model_, nullptr);
    ASSERT_EQ(seqrt_session_create(model_, nullptr, &session_), SEQRT_OK)
        << seqrt_last_error_message();
    ASSERT_EQ(seqrt_stream_create(session_, &stream_), SEQRT_OK);
  }
  void TearDown() override {
    seqrt_stream_release(stream_);
    seqrt_session_release(session_);
    seqrt_model_release(model_);
  }

  // Feeds x positions [begin, end) through `call`; y's values.
  std::vector<float> feed(decltype(&seqrt_stream_step) call,
                          seqrt_stream* stream, int64_t begin, int64_t end) {
    seqrt_tensor* x = x_tensor(begin, end);
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    const seqrt_tensor* feeds[] = {x};
    seqrt_tensor* y = nullptr;
    EXPECT_EQ(call(stream, in, feeds, 1, out, &y, 1), SEQRT_OK)
        << seqrt_last_error_message();
    std::vector<float> values = y ? floats(y) : std::vector<float>{};
    seqrt_tensor_release(y);
    seqrt_tensor_release(x);
    return values;
  }

  std::vector<float> whole_run() {
    seqrt_tensor* x = x_tensor(0, kTotal);
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    const seqrt_tensor* feeds[] = {x};
    seqrt_tensor* y = nullptr;
    EXPECT_EQ(seqrt_session_run(session_, in, feeds, 1, out, &y, 1), SEQRT_OK);
    std::vector<float> values = floats(y);
    seqrt_tensor_release(y);
    seqrt_tensor_release(x);
    return values;
  }

  seqrt_model* model_ = nullptr;
  seqrt_session* session_ = nullptr;
  seqrt_stream* stream_ = nullptr;
};

void expect_close(const std::vector<float>& got,
                  const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
  }
}

TEST_F(CApiStream, PrefillThenStepsEqualsTheWholeRun) {
  std::vector<float> whole = whole_run();
  std::vector<float> prefilled =
      feed(seqrt_stream_prefill, stream_, 0, kPrompt);
  for (int64_t t = 0; t < kPrompt; ++t) {
    expect_close(position(prefilled, kPrompt, t), position(whole, kTotal, t));
  }
  for (int64_t t = kPrompt; t < kTotal; ++t) {
    std::vector<float> stepped = feed(seqrt_stream_step, stream_, t, t + 1);
    expect_close(stepped, position(whole, kTotal, t));
  }
}

TEST_F(CApiStream, SnapshotRestoreEqualsAReplay) {
  feed(seqrt_stream_prefill, stream_, 0, kPrompt);
  seqrt_snapshot* saved = nullptr;
  ASSERT_EQ(seqrt_stream_snapshot(stream_, &saved), SEQRT_OK);
  std::vector<float> first =
      feed(seqrt_stream_step, stream_, kPrompt, kPrompt + 1);
  feed(seqrt_stream_step, stream_, kPrompt + 1, kPrompt + 2);
  ASSERT_EQ(seqrt_stream_restore(stream_, saved), SEQRT_OK);
  std::vector<float> again =
      feed(seqrt_stream_step, stream_, kPrompt, kPrompt + 1);
  EXPECT_EQ(again, first);  // the same state, the same arithmetic

  // A second stream restored from the snapshot replays the same way.
  seqrt_stream* other = nullptr;
  ASSERT_EQ(seqrt_stream_create(session_, &other), SEQRT_OK);
  ASSERT_EQ(seqrt_stream_restore(other, saved), SEQRT_OK);
  EXPECT_EQ(feed(seqrt_stream_step, other, kPrompt, kPrompt + 1), first);
  seqrt_stream_release(other);
  seqrt_snapshot_release(saved);
}

TEST_F(CApiStream, ResetStartsOver) {
  std::vector<float> fresh = feed(seqrt_stream_prefill, stream_, 0, kPrompt);
  feed(seqrt_stream_step, stream_, kPrompt, kPrompt + 1);
  ASSERT_EQ(seqrt_stream_reset(stream_), SEQRT_OK);
  EXPECT_EQ(feed(seqrt_stream_prefill, stream_, 0, kPrompt), fresh);
}

TEST_F(CApiStream, StateOutputsStayInTheStream) {
  seqrt_tensor* x = x_tensor(0, 2);
  const char* in[] = {"x"};
  const char* out[] = {"present_state"};
  const seqrt_tensor* feeds[] = {x};
  seqrt_tensor* state = nullptr;
  EXPECT_EQ(seqrt_stream_prefill(stream_, in, feeds, 1, out, &state, 1),
            SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("state output")) << seqrt_last_error_message();
  EXPECT_EQ(state, nullptr);
  seqrt_tensor_release(x);
}

TEST_F(CApiStream, BadFeedsLeaveTheStateUnchanged) {
  feed(seqrt_stream_prefill, stream_, 0, kPrompt);
  seqrt_tensor* x = x_tensor(kPrompt, kPrompt + 1);
  const char* wrong[] = {"q"};
  const seqrt_tensor* feeds[] = {x};
  EXPECT_EQ(seqrt_stream_step(stream_, wrong, feeds, 1, nullptr, nullptr, 0),
            SEQRT_INVALID_ARGUMENT);
  seqrt_tensor_release(x);
  std::vector<float> whole = whole_run();
  expect_close(feed(seqrt_stream_step, stream_, kPrompt, kPrompt + 1),
               position(whole, kTotal, kPrompt));
}

TEST_F(CApiStream, KeepsItsSessionAlive) {
  seqrt_session_release(session_);
  session_ = nullptr;
  seqrt_model_release(model_);
  model_ = nullptr;
  EXPECT_EQ(feed(seqrt_stream_prefill, stream_, 0, 2).size(),
            static_cast<size_t>(kHeads * 2 * kDim));
}

// The retention model has a recurrent state, no KV cache: a capacity is
// refused at creation, saying why; a negative one at once.
TEST(CApiKvCacheCapacity, NeedsAKvCacheAndAPositiveSize) {
  seqrt_session_options* options = nullptr;
  ASSERT_EQ(seqrt_session_options_create(&options), SEQRT_OK);
  EXPECT_EQ(seqrt_session_options_set_kv_cache_capacity(options, -1),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("kv_cache_capacity must be >= 0"));
  ASSERT_EQ(seqrt_session_options_set_kv_cache_capacity(options, 64),
            SEQRT_OK);
  seqrt_model* model = load_retention_model();
  ASSERT_NE(model, nullptr);
  seqrt_session* session = nullptr;
  EXPECT_EQ(seqrt_session_create(model, options, &session), SEQRT_UNSUPPORTED);
  EXPECT_EQ(session, nullptr);
  EXPECT_TRUE(message_has("has no KV cache")) << seqrt_last_error_message();
  seqrt_model_release(model);
  seqrt_session_options_release(options);
}

}  // namespace
}  // namespace c_api_test
