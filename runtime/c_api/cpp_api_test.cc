// seqrt.hpp: the RAII wrappers release their handles, throw seqrt::Error
// with the C status, and give the C API's results.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/c_api/testing/test_models.h"
#include "seqrt/seqrt.hpp"

namespace c_api_test {
namespace {

seqrt::Model load() {
  std::vector<uint8_t> bytes = retention_model_bytes();
  return seqrt::Model::load_memory(bytes.data(), bytes.size());
}

TEST(CppApi, DescribesTheModel) {
  seqrt::Model model = load();
  EXPECT_EQ(model.name(), "retention_model");
  std::vector<seqrt::ValueInfo> inputs = model.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[0].dims, (std::vector<int64_t>{1, kHeads, -1, kDim}));
  EXPECT_EQ(inputs[0].symbols[2], "seq");
  ASSERT_EQ(model.state_pairs().size(), 1u);
  EXPECT_EQ(model.state_pairs()[0].second, "present_state");
  EXPECT_EQ(model.metadata("producer"), "c_api_test");
  EXPECT_FALSE(model.metadata("absent").has_value());
  EXPECT_EQ(model.metadata().size(), 1u);
  EXPECT_EQ(model.op_count(), 5u);
}

TEST(CppApi, ErrorsThrowWithTheStatus) {
  try {
    seqrt::Model::load_file("/nonexistent/model.seqrt");
    FAIL() << "expected seqrt::Error";
  } catch (const seqrt::Error& error) {
    EXPECT_EQ(error.code(), SEQRT_NOT_FOUND);
    EXPECT_NE(std::string(error.what()).find("/nonexistent/model.seqrt"),
              std::string::npos);
  }
  seqrt::Model model = load();
  EXPECT_THROW(seqrt::Session(model, seqrt::SessionOptions().backend("x")),
               seqrt::Error);
}

TEST(CppApi, BackendOptionsChainAndThrowNamingTheKey) {
  seqrt::Model model = load();
  seqrt::Session session(
      model,
      seqrt::SessionOptions().backend("cpu").backend_option("device", "0"));
  EXPECT_EQ(session.backend_name(), "cpu");
  try {
    seqrt::SessionOptions().backend_option("colour", "blue");
    FAIL() << "expected seqrt::Error";
  } catch (const seqrt::Error& error) {
    EXPECT_EQ(error.code(), SEQRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(error.what()).find("'colour'"), std::string::npos)
        << error.what();
  }
}

TEST(CppApi, LoadFileTakesLoadFlags) {
  std::vector<uint8_t> bytes = retention_model_bytes();
  std::string path = ::testing::TempDir() + "cpp_api_copied_model.seqrt";
  {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  seqrt::Model model = seqrt::Model::load_file(path, SEQRT_LOAD_COPY);
  std::ofstream(path, std::ios::binary | std::ios::trunc).close();
  std::remove(path.c_str());
  seqrt::Session session(model, seqrt::SessionOptions().threads(1));
  seqrt::Tensor x =
      seqrt::Tensor::from_vector<float>({1, kHeads, 2, kDim}, x_values(0, 2));
  EXPECT_EQ(session.run({{"x", x}}, {"y"})[0].to_vector<float>().size(),
            static_cast<size_t>(kHeads * 2 * kDim));
  EXPECT_THROW(seqrt::Model::load_file(path, 0x80), seqrt::Error);
}

TEST(CppApi, StreamMatchesTheWholeRun) {
  seqrt::Model model = load();
  seqrt::Session session(model, seqrt::SessionOptions().threads(1));
  std::vector<float> all = x_values(0, 4);
  seqrt::Tensor whole_x =
      seqrt::Tensor::borrow<float>({1, kHeads, 4, kDim}, all);
  EXPECT_EQ(whole_x.data(), all.data());
  std::vector<float> whole =
      session.run({{"x", whole_x}}, {"y"})[0].to_vector<float>();

  seqrt::Stream stream(session);
  seqrt::Tensor prompt =
      seqrt::Tensor::from_vector<float>({1, kHeads, 3, kDim}, x_values(0, 3));
  stream.prefill({{"x", prompt}}, {"y"});
  seqrt::Snapshot saved = stream.snapshot();
  seqrt::Tensor last =
      seqrt::Tensor::from_vector<float>({1, kHeads, 1, kDim}, x_values(3, 4));
  std::vector<float> step =
      stream.step({{"x", last}}, {"y"})[0].to_vector<float>();
  std::vector<float> want = position(whole, 4, 3);
  ASSERT_EQ(step.size(), want.size());
  for (size_t i = 0; i < step.size(); ++i) EXPECT_NEAR(step[i], want[i], 1e-4);
  stream.restore(saved);
  EXPECT_EQ(stream.step({{"x", last}}, {"y"})[0].to_vector<float>(), step);
  EXPECT_THROW(stream.step({{"x", last}}, {"y"})[0].data_as<int64_t>(),
               seqrt::Error);
  seqrt::MemoryPlanSizes plan = session.memory_plan({{"seq", 8}});
  EXPECT_LE(plan.peak_arena_bytes, plan.naive_bytes);
  EXPECT_FALSE(session.backend_name().empty());
}

TEST(CppApiRunControl, ErrorsCarryTheCodes) {
  const std::vector<uint8_t> bytes = loop_model_bytes();
  seqrt::Model model = seqrt::Model::load_memory(bytes.data(), bytes.size());
  seqrt::SessionOptions options;
  options.limit(SEQRT_LIMIT_MAX_LOOP_ITERATIONS, kLoopHugeTrips)
      .run_timeout_ms(100);
  seqrt::Session session(model, options);
  seqrt::Tensor m = seqrt::Tensor::from_vector<int64_t>({}, {kLoopHugeTrips});
  seqrt::Tensor v0 = seqrt::Tensor::from_vector<float>({2}, {0, 0});
  try {
    session.run({{"m", m}, {"v0", v0}}, {"v_final"});
    ADD_FAILURE() << "the run did not time out";
  } catch (const seqrt::Error& error) {
    EXPECT_EQ(error.code(), SEQRT_DEADLINE_EXCEEDED) << error.what();
  }
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    session.cancel();
  });
  try {
    session.run({{"m", m}, {"v0", v0}}, {"v_final"});
    ADD_FAILURE() << "the run was not stopped";
  } catch (const seqrt::Error& error) {
    // The cancel, or the deadline should the thread start late.
    EXPECT_TRUE(error.code() == SEQRT_CANCELLED ||
                error.code() == SEQRT_DEADLINE_EXCEEDED)
        << error.what();
  }
  canceller.join();
  seqrt::Tensor few = seqrt::Tensor::from_vector<int64_t>({}, {4});
  std::vector<seqrt::Tensor> out =
      session.run({{"m", few}, {"v0", v0}}, {"v_final"});
  EXPECT_EQ(out.size(), 1u);
}

}  // namespace
}  // namespace c_api_test
