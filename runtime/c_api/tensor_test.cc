// The C API's status handling and tensors: NULL arguments are errors with a
// message, never a crash; created tensors own a copy; borrowed tensors read
// the caller's memory in place.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

TEST(CApiStatus, VersionMatchesTheHeaders) {
  std::string want = std::to_string(SEQRT_VERSION_MAJOR) + "." +
                     std::to_string(SEQRT_VERSION_MINOR) + "." +
                     std::to_string(SEQRT_VERSION_PATCH);
  EXPECT_EQ(std::string(seqrt_version()), want);
  EXPECT_EQ(std::string(SEQRT_VERSION_STRING), want);
  EXPECT_EQ(seqrt_abi_version(), SEQRT_ABI_VERSION);
}

TEST(CApiStatus, NamesStatusesAndDtypes) {
  EXPECT_STREQ(seqrt_status_name(SEQRT_OK), "ok");
  EXPECT_STREQ(seqrt_status_name(SEQRT_NOT_FOUND), "not found");
  EXPECT_STREQ(seqrt_status_name(static_cast<seqrt_status>(99)),
               "unknown status");
  EXPECT_STREQ(seqrt_dtype_name(SEQRT_DTYPE_BF16), "bf16");
  EXPECT_STREQ(seqrt_dtype_name(static_cast<seqrt_dtype>(42)), "undefined");
  EXPECT_EQ(seqrt_dtype_size(SEQRT_DTYPE_I64), 8u);
  EXPECT_EQ(seqrt_dtype_size(SEQRT_DTYPE_BOOL), 1u);
  EXPECT_EQ(seqrt_dtype_size(SEQRT_DTYPE_UNDEFINED), 0u);
  EXPECT_STREQ(seqrt_dtype_name(SEQRT_DTYPE_F8E8M0), "f8e8m0");
  EXPECT_STREQ(seqrt_dtype_name(SEQRT_DTYPE_F4E2M1), "f4e2m1");
  EXPECT_STREQ(seqrt_dtype_name(static_cast<seqrt_dtype>(18)), "undefined");
  EXPECT_EQ(seqrt_dtype_size(SEQRT_DTYPE_F8E8M0), 1u);
  EXPECT_EQ(seqrt_dtype_size(SEQRT_DTYPE_F4E2M1), 0u);  // packed
}

TEST(CApiTensor, Float4E2M1IsPackedTwoAByte) {
  // 0.5, -6, 3: an odd count takes (3 + 1) / 2 bytes.
  const uint8_t packed[2] = {0xf1, 0x05};
  int64_t dims[1] = {3};
  seqrt_tensor* tensor = nullptr;
  EXPECT_EQ(
      seqrt_tensor_create(SEQRT_DTYPE_F4E2M1, dims, 1, packed, 3, &tensor),
      SEQRT_INVALID_ARGUMENT);
  ASSERT_EQ(
      seqrt_tensor_create(SEQRT_DTYPE_F4E2M1, dims, 1, packed, 2, &tensor),
      SEQRT_OK);
  seqrt_dtype dtype = SEQRT_DTYPE_UNDEFINED;
  ASSERT_EQ(seqrt_tensor_dtype(tensor, &dtype), SEQRT_OK);
  EXPECT_EQ(dtype, SEQRT_DTYPE_F4E2M1);
  size_t bytes = 0;
  ASSERT_EQ(seqrt_tensor_byte_size(tensor, &bytes), SEQRT_OK);
  EXPECT_EQ(bytes, 2u);
  const void* data = nullptr;
  ASSERT_EQ(seqrt_tensor_data(tensor, &data), SEQRT_OK);
  EXPECT_EQ(std::memcmp(data, packed, 2), 0);
  seqrt_tensor_release(tensor);
}

TEST(CApiStatus, NullArgumentsAreErrorsNamingThem) {
  seqrt_tensor* tensor = nullptr;
  int64_t dims[1] = {2};
  EXPECT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 1, nullptr, 0, nullptr),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("seqrt_tensor_create: out is NULL"))
      << seqrt_last_error_message();
  EXPECT_EQ(
      seqrt_tensor_create(SEQRT_DTYPE_F32, nullptr, 1, nullptr, 0, &tensor),
      SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("dims is NULL"));
  EXPECT_EQ(tensor, nullptr);  // out-pointers untouched on failure
  seqrt_dtype dtype;
  EXPECT_EQ(seqrt_tensor_dtype(nullptr, &dtype), SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("tensor is NULL"));
  EXPECT_EQ(seqrt_model_load_file(nullptr, nullptr), SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(
      seqrt_session_run(nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
      SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("session is NULL"));
  EXPECT_EQ(
      seqrt_stream_step(nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
      SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_stream_restore(nullptr, nullptr), SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(seqrt_session_options_set_backend(nullptr, "cpu"),
            SEQRT_INVALID_ARGUMENT);
  // Releasing NULL is allowed.
  seqrt_tensor_release(nullptr);
  seqrt_model_release(nullptr);
  seqrt_session_release(nullptr);
  seqrt_session_options_release(nullptr);
  seqrt_stream_release(nullptr);
  seqrt_snapshot_release(nullptr);
}

TEST(CApiStatus, LastErrorIsPerThread) {
  seqrt_dtype dtype;
  ASSERT_EQ(seqrt_tensor_dtype(nullptr, &dtype), SEQRT_INVALID_ARGUMENT);
  std::string here = seqrt_last_error_message();
  std::string there;
  std::thread other([&] {
    there = seqrt_last_error_message();  // nothing failed on this thread
    EXPECT_EQ(seqrt_model_load_file("/nonexistent/other.seqrt", nullptr),
              SEQRT_INVALID_ARGUMENT);
  });
  other.join();
  EXPECT_EQ(there, "");
  EXPECT_EQ(std::string(seqrt_last_error_message()), here);
}

TEST(CApiTensor, CreateCopiesTheData) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  int64_t dims[2] = {2, 3};
  seqrt_tensor* tensor = nullptr;
  ASSERT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 2, values.data(),
                                values.size() * sizeof(float), &tensor),
            SEQRT_OK);
  values[0] = 100;  // the tensor holds its own copy
  const void* data = nullptr;
  ASSERT_EQ(seqrt_tensor_data(tensor, &data), SEQRT_OK);
  EXPECT_NE(data, values.data());
  EXPECT_EQ(static_cast<const float*>(data)[0], 1.0f);
  const int64_t* got_dims = nullptr;
  size_t rank = 0;
  ASSERT_EQ(seqrt_tensor_shape(tensor, &got_dims, &rank), SEQRT_OK);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(got_dims[0], 2);
  EXPECT_EQ(got_dims[1], 3);
  size_t bytes = 0;
  ASSERT_EQ(seqrt_tensor_byte_size(tensor, &bytes), SEQRT_OK);
  EXPECT_EQ(bytes, 24u);
  void* writable = nullptr;
  ASSERT_EQ(seqrt_tensor_mutable_data(tensor, &writable), SEQRT_OK);
  static_cast<float*>(writable)[1] = 7;
  EXPECT_EQ(floats(tensor)[1], 7.0f);
  seqrt_tensor_release(tensor);
}

TEST(CApiTensor, CreateWithoutDataIsZeros) {
  int64_t dims[1] = {3};
  seqrt_tensor* tensor = nullptr;
  ASSERT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 1, nullptr, 0, &tensor),
            SEQRT_OK);
  EXPECT_EQ(floats(tensor), (std::vector<float>{0, 0, 0}));
  seqrt_tensor_release(tensor);
  seqrt_tensor* scalar = nullptr;
  float one = 1;
  ASSERT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, nullptr, 0, &one, 4, &scalar),
            SEQRT_OK);
  EXPECT_EQ(floats(scalar), (std::vector<float>{1}));
  seqrt_tensor_release(scalar);
}

TEST(CApiTensor, BorrowReadsCallerMemoryWithoutACopy) {
  std::vector<float> values = {1, 2, 3, 4};
  int64_t dims[2] = {2, 2};
  seqrt_tensor* tensor = nullptr;
  ASSERT_EQ(seqrt_tensor_borrow(SEQRT_DTYPE_F32, dims, 2, values.data(),
                                values.size() * sizeof(float), &tensor),
            SEQRT_OK);
  const void* data = nullptr;
  ASSERT_EQ(seqrt_tensor_data(tensor, &data), SEQRT_OK);
  EXPECT_EQ(data, values.data());
  values[2] = 30;  // visible through the tensor: no copy was made
  EXPECT_EQ(floats(tensor)[2], 30.0f);
  void* writable = nullptr;
  EXPECT_EQ(seqrt_tensor_mutable_data(tensor, &writable),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("read-only"));
  seqrt_tensor_release(tensor);
}

TEST(CApiTensor, BadSpecsAreRefused) {
  float values[4] = {};
  int64_t dims[2] = {2, 2};
  seqrt_tensor* tensor = nullptr;
  EXPECT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 2, values, 12, &tensor),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("needs 16 bytes, got 12"))
      << seqrt_last_error_message();
  int64_t negative[2] = {2, -1};
  EXPECT_EQ(
      seqrt_tensor_borrow(SEQRT_DTYPE_F32, negative, 2, values, 16, &tensor),
      SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("dims[1] is -1"));
  int64_t huge[2] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, huge, 2, nullptr, 0, &tensor),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("overflows"));
  EXPECT_EQ(seqrt_tensor_create(static_cast<seqrt_dtype>(77), dims, 2, values,
                                16, &tensor),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("unknown dtype 77"));
  auto* misaligned = reinterpret_cast<const char*>(values) + 1;
  int64_t one[1] = {1};
  EXPECT_EQ(
      seqrt_tensor_borrow(SEQRT_DTYPE_F32, one, 1, misaligned, 4, &tensor),
      SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("not aligned"));
  EXPECT_EQ(tensor, nullptr);
}

}  // namespace
}  // namespace c_api_test
