// seqrt_model_*: loading from a file or memory, errors that name the file,
// and introspection of inputs, outputs, state pairs and metadata.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.h"

namespace c_api_test {
namespace {

TEST(CApiModel, MissingFileIsNotFoundNamingIt) {
  seqrt_model* model = nullptr;
  EXPECT_EQ(seqrt_model_load_file("/nonexistent/dir/model.seqrt", &model),
            SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("/nonexistent/dir/model.seqrt"))
      << seqrt_last_error_message();
  EXPECT_EQ(model, nullptr);
}

TEST(CApiModel, LoadsFromAFileAndFromMemoryAlike) {
  std::vector<uint8_t> bytes = retention_model_bytes();
  std::string path = ::testing::TempDir() + "c_api_model_test.seqrt";
  {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  seqrt_model* from_file = nullptr;
  ASSERT_EQ(seqrt_model_load_file(path.c_str(), &from_file), SEQRT_OK)
      << seqrt_last_error_message();
  seqrt_model* from_memory = nullptr;
  ASSERT_EQ(seqrt_model_load_memory(bytes.data(), bytes.size(), &from_memory),
            SEQRT_OK);
  bytes.assign(bytes.size(), 0);  // the model holds its own copy
  size_t a = 0, b = 0;
  ASSERT_EQ(seqrt_model_op_count(from_file, &a), SEQRT_OK);
  ASSERT_EQ(seqrt_model_op_count(from_memory, &b), SEQRT_OK);
  EXPECT_EQ(a, 5u);  // 3 MatMul, Retention, Add
  EXPECT_EQ(a, b);
  seqrt_model_release(from_file);
  seqrt_model_release(from_memory);
  std::remove(path.c_str());
}

// y of the model on x_tensor(0, 4), or empty on failure.
std::vector<float> run_y(const seqrt_model* model) {
  seqrt_session* session = nullptr;
  EXPECT_EQ(seqrt_session_create(model, nullptr, &session), SEQRT_OK)
      << seqrt_last_error_message();
  seqrt_tensor* x = x_tensor(0, 4);
  const char* in[] = {"x"};
  const char* out[] = {"y"};
  const seqrt_tensor* feeds[] = {x};
  seqrt_tensor* y = nullptr;
  std::vector<float> values;
  if (session != nullptr &&
      seqrt_session_run(session, in, feeds, 1, out, &y, 1) == SEQRT_OK) {
    values = floats(y);
  }
  seqrt_tensor_release(y);
  seqrt_tensor_release(x);
  seqrt_session_release(session);
  return values;
}

// SEQRT_LOAD_COPY reads the file into memory: truncating it after the load
// cannot fault (a mapped load would die of SIGBUS at its weights).
TEST(CApiModel, ACopiedLoadSurvivesTruncatingTheFile) {
  std::vector<uint8_t> bytes = retention_model_bytes();
  std::string path = ::testing::TempDir() + "c_api_copied_model.seqrt";
  {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  seqrt_model* copied = nullptr;
  ASSERT_EQ(
      seqrt_model_load_file_with_flags(path.c_str(), SEQRT_LOAD_COPY, &copied),
      SEQRT_OK)
      << seqrt_last_error_message();
  std::ofstream(path, std::ios::binary | std::ios::trunc).close();
  std::remove(path.c_str());
  seqrt_model* from_memory = load_retention_model();
  std::vector<float> y = run_y(copied);
  EXPECT_FALSE(y.empty());
  EXPECT_EQ(y, run_y(from_memory));
  seqrt_model_release(copied);
  seqrt_model_release(from_memory);
}

TEST(CApiModel, LoadFlagsAreChecked) {
  seqrt_model* model = nullptr;
  EXPECT_EQ(seqrt_model_load_file_with_flags("x.seqrt", 0x6, &model),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("unknown load flags 0x6"))
      << seqrt_last_error_message();
  EXPECT_EQ(seqrt_model_load_file_with_flags("/nonexistent/dir/model.seqrt",
                                             SEQRT_LOAD_COPY, &model),
            SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("/nonexistent/dir/model.seqrt"));
  EXPECT_EQ(seqrt_model_load_file_with_flags(nullptr, 0, &model),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_EQ(model, nullptr);
}

TEST(CApiModel, LoadsOnnxFromMemory) {
  std::string bytes = onnx_relu_model_bytes();
  seqrt_model* model = nullptr;
  ASSERT_EQ(seqrt_model_load_memory(bytes.data(), bytes.size(), &model),
            SEQRT_OK)
      << seqrt_last_error_message();
  seqrt_session* session = nullptr;
  ASSERT_EQ(seqrt_session_create(model, nullptr, &session), SEQRT_OK)
      << seqrt_last_error_message();
  float values[6] = {-1, 2, -3, 4, 0, -0.5f};
  int64_t dims[2] = {2, 3};
  seqrt_tensor* x = nullptr;
  ASSERT_EQ(
      seqrt_tensor_borrow(SEQRT_DTYPE_F32, dims, 2, values, sizeof(values), &x),
      SEQRT_OK);
  const char* in[] = {"x"};
  const char* out[] = {"y"};
  const seqrt_tensor* feeds[] = {x};
  seqrt_tensor* y = nullptr;
  ASSERT_EQ(seqrt_session_run(session, in, feeds, 1, out, &y, 1), SEQRT_OK)
      << seqrt_last_error_message();
  EXPECT_EQ(floats(y), (std::vector<float>{0, 2, 0, 4, 0, 0}));
  seqrt_tensor_release(y);
  seqrt_tensor_release(x);
  seqrt_session_release(session);
  seqrt_model_release(model);
}

TEST(CApiModel, BadBytesAreAnErrorNotACrash) {
  std::vector<uint8_t> bytes = retention_model_bytes();
  bytes.resize(bytes.size() / 2);  // truncated .seqrt
  seqrt_model* model = nullptr;
  EXPECT_NE(seqrt_model_load_memory(bytes.data(), bytes.size(), &model),
            SEQRT_OK);
  EXPECT_NE(std::string(seqrt_last_error_message()), "");
  const char junk[] = "definitely not a model";
  EXPECT_NE(seqrt_model_load_memory(junk, sizeof(junk), &model), SEQRT_OK);
  EXPECT_EQ(seqrt_model_load_memory(junk, 0, &model), SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("empty"));
  EXPECT_EQ(model, nullptr);
}

TEST(CApiModel, DescribesInputsOutputsAndStatePairs) {
  seqrt_model* model = load_retention_model();
  ASSERT_NE(model, nullptr);
  const char* name = nullptr;
  ASSERT_EQ(seqrt_model_name(model, &name), SEQRT_OK);
  EXPECT_STREQ(name, "retention_model");

  size_t inputs = 0, outputs = 0;
  ASSERT_EQ(seqrt_model_io_count(model, SEQRT_IO_INPUT, &inputs), SEQRT_OK);
  ASSERT_EQ(seqrt_model_io_count(model, SEQRT_IO_OUTPUT, &outputs), SEQRT_OK);
  EXPECT_EQ(inputs, 2u);
  EXPECT_EQ(outputs, 2u);
  ASSERT_EQ(seqrt_model_io_name(model, SEQRT_IO_INPUT, 0, &name), SEQRT_OK);
  EXPECT_STREQ(name, "x");
  seqrt_dtype dtype;
  ASSERT_EQ(seqrt_model_io_dtype(model, SEQRT_IO_INPUT, 0, &dtype), SEQRT_OK);
  EXPECT_EQ(dtype, SEQRT_DTYPE_F32);
  int64_t rank = 0;
  ASSERT_EQ(seqrt_model_io_rank(model, SEQRT_IO_INPUT, 0, &rank), SEQRT_OK);
  EXPECT_EQ(rank, 4);
  int64_t size = 0;
  const char* symbol = "unset";
  ASSERT_EQ(seqrt_model_io_dim(model, SEQRT_IO_INPUT, 0, 1, &size, &symbol),
            SEQRT_OK);
  EXPECT_EQ(size, kHeads);
  EXPECT_EQ(symbol, nullptr);
  ASSERT_EQ(seqrt_model_io_dim(model, SEQRT_IO_INPUT, 0, 2, &size, &symbol),
            SEQRT_OK);
  EXPECT_EQ(size, -1);
  EXPECT_STREQ(symbol, "seq");
  ASSERT_EQ(seqrt_model_io_name(model, SEQRT_IO_OUTPUT, 0, &name), SEQRT_OK);
  EXPECT_STREQ(name, "y");

  EXPECT_EQ(seqrt_model_io_name(model, SEQRT_IO_INPUT, 2, &name),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("index 2 is out of range"));
  EXPECT_EQ(seqrt_model_io_dim(model, SEQRT_IO_INPUT, 0, 4, &size, nullptr),
            SEQRT_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("axis 4 is out of range"));

  size_t pairs = 0;
  ASSERT_EQ(seqrt_model_state_pair_count(model, &pairs), SEQRT_OK);
  ASSERT_EQ(pairs, 1u);
  const char *past = nullptr, *present = nullptr;
  ASSERT_EQ(seqrt_model_state_pair(model, 0, &past, &present), SEQRT_OK);
  EXPECT_STREQ(past, "past_state");
  EXPECT_STREQ(present, "present_state");
  seqrt_model_release(model);
}

TEST(CApiModel, ReadsMetadata) {
  seqrt_model* model = load_retention_model();
  ASSERT_NE(model, nullptr);
  const char* value = nullptr;
  ASSERT_EQ(seqrt_model_metadata(model, "producer", &value), SEQRT_OK);
  EXPECT_STREQ(value, "c_api_test");
  EXPECT_EQ(seqrt_model_metadata(model, "absent", &value), SEQRT_NOT_FOUND);
  EXPECT_TRUE(message_has("no metadata key 'absent'"));
  size_t count = 0;
  ASSERT_EQ(seqrt_model_metadata_count(model, &count), SEQRT_OK);
  ASSERT_EQ(count, 1u);
  const char* key = nullptr;
  ASSERT_EQ(seqrt_model_metadata_key(model, 0, &key), SEQRT_OK);
  EXPECT_STREQ(key, "producer");
  EXPECT_EQ(seqrt_model_metadata_key(model, 1, &key), SEQRT_INVALID_ARGUMENT);
  seqrt_model_release(model);
}

}  // namespace
}  // namespace c_api_test
