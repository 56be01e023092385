// Sessions and Streams from many threads: one compiled plan run from 8 threads
// with a Stream each gives bit-exact the results of serial runs, Sessions
// created and destroyed beside running ones change nothing, and the same holds
// through the C API. Sizes stay small so the binary is quick under
// ThreadSanitizer (which runs the kernels on two OpenMP threads).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "importers/native/writer.h"
#include "runtime/backend_registry.h"
#include "runtime/c_api/testing/retention_graph.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "seqrt/seqrt.h"

namespace seqrt {
namespace {

constexpr int kThreads = 8;
// The model's sizes (runtime/c_api/testing/retention_graph.h).
constexpr int64_t kHeads = 2, kDim = 4, kPrompt = 5, kSteps = 3;

// y = x + Retention(x Wq, x Wk, x Wv, past_state): stateful, with weights,
// a symbolic sequence length and a fused sequence op (the C API tests'
// model).
Graph retention_graph() {
  Result<Graph> graph = build_retention_test_graph();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

// Positions [begin, begin + n) of sequence `seed`, (1, H, n, d).
std::vector<float> x_values(int seed, int64_t begin, int64_t n) {
  std::vector<float> values;
  for (int64_t h = 0; h < kHeads; ++h) {
    for (int64_t t = begin; t < begin + n; ++t) {
      for (int64_t d = 0; d < kDim; ++d) {
        values.push_back(std::sin(
            0.37f * static_cast<float>(seed * 101 + h * 31 + t * 7 + d)));
      }
    }
  }
  return values;
}

Tensor x_tensor(int seed, int64_t begin, int64_t n) {
  return Tensor::from_vector<float>({1, kHeads, n, kDim},
                                    x_values(seed, begin, n));
}

// Every y of one sequence (prompt, then single steps), concatenated.
std::vector<float> run_sequence(const Session& session, int seed) {
  Stream stream(session);
  std::vector<float> ys;
  auto append = [&](int64_t begin, int64_t n) {
    Result<std::map<std::string, Tensor>> out =
        stream.run({{"x", x_tensor(seed, begin, n)}});
    EXPECT_TRUE(out.is_ok()) << out.status().to_string();
    if (!out.is_ok()) return;
    const Tensor& y = out->at("y");
    const float* data = static_cast<const float*>(y.data());
    ys.insert(ys.end(), data, data + y.num_elements());
  };
  append(0, kPrompt);
  for (int64_t s = 0; s < kSteps; ++s) append(kPrompt + s, 1);
  return ys;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::unique_ptr<Session> make_session(const std::string& backend) {
  SessionOptions options;
  options.backend = backend;
  options.compile.num_threads = 1;
  Result<std::unique_ptr<Session>> session =
      Session::create(retention_graph(), options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

std::vector<std::string> host_backends() {
  std::vector<std::string> names;
  for (const std::string& name : compiled_backends()) {
    if (name == "reference" || name == "cpu") names.push_back(name);
  }
  return names;
}

class Concurrency : public ::testing::TestWithParam<std::string> {};

TEST_P(Concurrency, EightThreadsOnOnePlanMatchSerialRuns) {
  std::unique_ptr<Session> session = make_session(GetParam());
  ASSERT_NE(session, nullptr);
  std::vector<std::vector<float>> serial(kThreads);
  for (int t = 0; t < kThreads; ++t) serial[t] = run_sequence(*session, t);

  std::vector<std::vector<float>> parallel(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { parallel[t] = run_sequence(*session, t); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_FALSE(serial[t].empty());
    EXPECT_TRUE(bit_equal(serial[t], parallel[t])) << "thread " << t;
  }
}

TEST_P(Concurrency, SessionsComeAndGoBesideRunningOnes) {
  std::unique_ptr<Session> session = make_session(GetParam());
  ASSERT_NE(session, nullptr);
  const std::vector<float> expected = run_sequence(*session, 3);
  std::atomic<int> mismatches{0}, created{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 6; ++i) {
        if (!bit_equal(run_sequence(*session, 3), expected)) ++mismatches;
      }
    });
  }
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 3; ++i) {
        // Load, compile, run once and destroy, while the others run.
        std::unique_ptr<Session> own = make_session(GetParam());
        if (own == nullptr) return;
        if (!bit_equal(run_sequence(*own, 3), expected)) ++mismatches;
        ++created;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(created.load(), 12);
  EXPECT_TRUE(bit_equal(run_sequence(*session, 3), expected));
}

INSTANTIATE_TEST_SUITE_P(HostBackends, Concurrency,
                         ::testing::ValuesIn(host_backends()));

// ---- The same through the C API ------------------------------------------

struct CApiModel {
  seqrt_model* model = nullptr;
  seqrt_session* session = nullptr;
  ~CApiModel() {
    seqrt_session_release(session);
    seqrt_model_release(model);
  }
};

// One sequence through a seqrt_stream of `session`; empty on failure.
std::vector<float> run_c_sequence(const seqrt_session* session, int seed) {
  seqrt_stream* stream = nullptr;
  if (seqrt_stream_create(session, &stream) != SEQRT_OK) return {};
  std::vector<float> ys;
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  auto append = [&](int64_t begin, int64_t n, bool prefill) {
    std::vector<float> x = x_values(seed, begin, n);
    const int64_t dims[] = {1, kHeads, n, kDim};
    seqrt_tensor* input = nullptr;
    seqrt_tensor* y = nullptr;
    if (seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 4, x.data(),
                            x.size() * sizeof(float), &input) != SEQRT_OK) {
      return false;
    }
    const seqrt_tensor* inputs[] = {input};
    seqrt_status status =
        prefill
            ? seqrt_stream_prefill(stream, in_names, inputs, 1, out_names, &y,
                                   1)
            : seqrt_stream_step(stream, in_names, inputs, 1, out_names, &y, 1);
    const void* data = nullptr;
    int64_t count = 0;
    bool ok = status == SEQRT_OK && seqrt_tensor_data(y, &data) == SEQRT_OK &&
              seqrt_tensor_element_count(y, &count) == SEQRT_OK;
    if (ok) {
      const float* values = static_cast<const float*>(data);
      ys.insert(ys.end(), values, values + count);
    }
    seqrt_tensor_release(y);
    seqrt_tensor_release(input);
    return ok;
  };
  bool ok = append(0, kPrompt, true);
  for (int64_t s = 0; ok && s < kSteps; ++s) ok = append(kPrompt + s, 1, false);
  seqrt_stream_release(stream);
  return ok ? ys : std::vector<float>{};
}

TEST(ConcurrencyCApi, EightStreamsFromEightThreadsMatchSerialRuns) {
  Result<std::vector<uint8_t>> bytes = write_seqrt_buffer(retention_graph());
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  for (const std::string& backend : host_backends()) {
    CApiModel handles;
    ASSERT_EQ(
        seqrt_model_load_memory(bytes->data(), bytes->size(), &handles.model),
        SEQRT_OK)
        << seqrt_last_error_message();
    seqrt_session_options* options = nullptr;
    ASSERT_EQ(seqrt_session_options_create(&options), SEQRT_OK);
    ASSERT_EQ(seqrt_session_options_set_backend(options, backend.c_str()),
              SEQRT_OK);
    ASSERT_EQ(seqrt_session_options_set_threads(options, 1), SEQRT_OK);
    seqrt_status created =
        seqrt_session_create(handles.model, options, &handles.session);
    seqrt_session_options_release(options);
    ASSERT_EQ(created, SEQRT_OK) << seqrt_last_error_message();

    std::vector<std::vector<float>> serial(kThreads), parallel(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      serial[t] = run_c_sequence(handles.session, t);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(
          [&, t] { parallel[t] = run_c_sequence(handles.session, t); });
    }
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_FALSE(serial[t].empty()) << backend << " thread " << t;
      EXPECT_TRUE(bit_equal(serial[t], parallel[t]))
          << backend << " thread " << t;
    }
  }
}

}  // namespace
}  // namespace seqrt
