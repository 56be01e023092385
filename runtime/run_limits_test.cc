// Limits that hold while a graph runs (graph/run_control.h): the tensor
// limits and the memory budget at every allocation, shapes computed from
// inputs included; max_loop_iterations; a run's deadline and the Session's
// cancel() from another thread. After each failure the Session (and a
// Stream's state) is as before and the next run is correct.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/builder.h"
#include "importers/onnx/onnx_test_util.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"
#include "runtime/stream.h"

namespace seqrt {
namespace {

constexpr int64_t kHuge = int64_t{1} << 62;

std::shared_ptr<Graph> subgraph(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::make_shared<Graph>(std::move(graph).value())
                       : nullptr;
}

Graph built(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

// Adds to `b` a Loop "loop0" of trip count `m` over v (width `width`):
// v <- v + 1 each iteration, and v stacked as a scan output.
std::vector<ValueId> add_counting_loop(GraphBuilder& b, ValueId m, ValueId v0,
                                       int64_t width) {
  GraphBuilder body("body");
  body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond_in", DType::kBool, Shape{});
  ValueId v = body.input("v", DType::kF32, Shape{width});
  ValueId one = body.constant("one", Tensor::scalar<float>(1));
  body.output(body.add("Identity", {cond}), "cond_out");
  ValueId next = body.add("Add", {v, one});
  body.output(next, "v_next");
  body.output(body.add("Identity", {next}), "v_t");
  NodeOptions options;
  options.name = "loop0";
  return b.add_node("Loop", {m, kNoValue, v0},
                    {{"body", subgraph(std::move(body))}}, 2, options);
}

// v_final, v_all = Loop(m) over v0 (width `width`).
Graph loop_graph(int64_t width) {
  GraphBuilder b("loop");
  ValueId m = b.input("m", DType::kI64, Shape{});
  ValueId v0 = b.input("v0", DType::kF32, Shape{width});
  std::vector<ValueId> outs = add_counting_loop(b, m, v0, width);
  b.output(outs[0], "v_final");
  b.output(outs[1], "v_all");
  return built(std::move(b));
}

// c = ConstantOfShape(shape), the shape an input.
Graph constant_of_shape_graph() {
  GraphBuilder b("cos");
  ValueId shape = b.input("shape", DType::kI64, Shape{1});
  NodeOptions options;
  options.name = "c0";
  b.output(b.add("ConstantOfShape", {shape}, {}, options), "c");
  return built(std::move(b));
}

// present = past + x (the state, updated first), then the counting loop
// over x: a stateful step that a long loop can make slow.
Graph stateful_loop_graph() {
  GraphBuilder b("stateful");
  ValueId past = b.input("past", DType::kF32, Shape{2});
  ValueId x = b.input("x", DType::kF32, Shape{2});
  ValueId m = b.input("m", DType::kI64, Shape{});
  NodeOptions present_options;
  present_options.output_names = {"present"};
  ValueId present = b.add("Add", {past, x}, {}, present_options);
  b.output(present);
  b.state_pair(past, present);
  b.output(add_counting_loop(b, m, x, 2)[0], "v_final");
  return built(std::move(b));
}

std::unique_ptr<Session> make_session(const std::string& backend, Graph graph,
                                      Limits limits = {}) {
  SessionOptions options;
  options.backend = backend;
  options.compile.num_threads = 1;
  options.limits = limits;
  Result<std::unique_ptr<Session>> session =
      Session::create(std::move(graph), options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

std::map<std::string, Tensor> loop_feeds(int64_t m, int64_t width) {
  return {{"m", Tensor::scalar<int64_t>(m)},
          {"v0", Tensor::from_vector<float>({width},
                                            std::vector<float>(width, 0.0f))}};
}

void expect_error(const Status& status, StatusCode code,
                  const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << status.message();
  }
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
}

// A correct run of the counting loop: 3 iterations give v = 3.
void expect_loop_runs(const Session& session, int64_t width) {
  auto out = session.run(loop_feeds(3, width));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out->at("v_final").element_f64(0), 3.0);
  EXPECT_EQ(out->at("v_all").dims(), (std::vector<int64_t>{3, width}));
}

std::vector<std::string> host_backends() {
  std::vector<std::string> names;
  for (const std::string& name : compiled_backends()) {
    if (name == "reference" || name == "cpu") names.push_back(name);
  }
  return names;
}

class RunLimits : public ::testing::TestWithParam<std::string> {};

TEST_P(RunLimits, ComputedShapesMeetTheTensorLimits) {
  Limits limits;
  limits.max_tensor_elements = 1000;
  limits.max_tensor_bytes = 1 << 20;
  auto session = make_session(GetParam(), constant_of_shape_graph(), limits);
  ASSERT_NE(session, nullptr);
  auto feed = [](int64_t n) {
    return std::map<std::string, Tensor>{
        {"shape", Tensor::from_vector<int64_t>({1}, {n})}};
  };
  expect_error(
      session->run(feed(200'000'000)).status(), StatusCode::kLimitExceeded,
      {"[ConstantOfShape] node 'c0'", "200000000 elements",
       "above max_tensor_elements (1000 elements)", "--max-tensor-elements"});
  // 2^41 elements: past kMaxElements' bound of the element limit too.
  expect_error(session->run(feed(int64_t{1} << 41)).status(),
               StatusCode::kLimitExceeded,
               {"[ConstantOfShape] node 'c0'", "max_tensor_elements"});
  auto fits = session->run(feed(1000));
  ASSERT_TRUE(fits.is_ok()) << fits.status().to_string();
  EXPECT_EQ(fits->at("c").num_elements(), 1000);

  limits.max_tensor_elements = int64_t{1} << 30;
  limits.max_tensor_bytes = 1 << 20;
  session = make_session(GetParam(), constant_of_shape_graph(), limits);
  ASSERT_NE(session, nullptr);
  expect_error(session->run(feed(1 << 20)).status(), StatusCode::kLimitExceeded,
               {"[ConstantOfShape] node 'c0'", "4.0 MiB",
                "above max_tensor_bytes (1.0 MiB)"});
}

TEST_P(RunLimits, ComputedShapesCountAgainstTheMemoryBudget) {
  Limits limits;
  limits.memory_budget_bytes = 1 << 20;
  auto session = make_session(GetParam(), constant_of_shape_graph(), limits);
  ASSERT_NE(session, nullptr);
  expect_error(
      session->run({{"shape", Tensor::from_vector<int64_t>({1}, {50'000'000})}})
          .status(),
      StatusCode::kLimitExceeded,
      {"[ConstantOfShape] node 'c0'", "above memory_budget (1.0 MiB)",
       "--memory-budget"});
  auto fits =
      session->run({{"shape", Tensor::from_vector<int64_t>({1}, {1000})}});
  ASSERT_TRUE(fits.is_ok()) << fits.status().to_string();
}

TEST_P(RunLimits, ALoopScanOutputGrowingPastTheBudgetStops) {
  constexpr int64_t kWidth = 1024;  // 4 KiB a step
  Limits limits;
  limits.memory_budget_bytes = 64 << 10;
  auto session = make_session(GetParam(), loop_graph(kWidth), limits);
  ASSERT_NE(session, nullptr);
  // The steps the scan output holds fill the budget, and the allocation
  // that would pass it fails (in the body or the stack, wherever it falls).
  expect_error(session->run(loop_feeds(kHuge, kWidth)).status(),
               StatusCode::kLimitExceeded,
               {"[Loop] node 'loop0'", "KiB the run holds) needs 4.0 KiB",
                "above memory_budget (64.0 KiB)"});
  expect_loop_runs(*session, kWidth);
}

TEST_P(RunLimits, ALoopScanOutputMeetsTheTensorLimits) {
  Limits limits;
  limits.max_tensor_elements = 100;
  auto session = make_session(GetParam(), loop_graph(10), limits);
  ASSERT_NE(session, nullptr);
  expect_error(session->run(loop_feeds(kHuge, 10)).status(),
               StatusCode::kLimitExceeded,
               {"[Loop] node 'loop0': scan output 0 after 11 steps",
                "110 elements", "above max_tensor_elements (100 elements)"});
  expect_loop_runs(*session, 10);
}

TEST_P(RunLimits, MaxLoopIterationsStopsALoopNamingTheNode) {
  Limits limits;
  limits.max_loop_iterations = 100;
  auto session = make_session(GetParam(), loop_graph(2), limits);
  ASSERT_NE(session, nullptr);
  expect_error(
      session->run(loop_feeds(kHuge, 2)).status(), StatusCode::kLimitExceeded,
      {"[Loop] node 'loop0' (trip count 4611686018427387904)", "101 iterations",
       "above max_loop_iterations (100 iterations)", "--max-loop-iterations"});
  auto at_limit = session->run(loop_feeds(100, 2));
  ASSERT_TRUE(at_limit.is_ok()) << at_limit.status().to_string();
  EXPECT_EQ(at_limit->at("v_final").element_f64(0), 100.0);
}

TEST_P(RunLimits, CancelFromAnotherThreadStopsALoopOfTwoToThe62Trips) {
  Limits limits;
  limits.max_loop_iterations = kHuge;
  auto session = make_session(GetParam(), loop_graph(2), limits);
  ASSERT_NE(session, nullptr);
  using Clock = std::chrono::steady_clock;
  Clock::time_point cancelled_at;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancelled_at = Clock::now();
    session->cancel();
  });
  Result<std::map<std::string, Tensor>> out =
      session->run(loop_feeds(kHuge, 2));
  const Clock::time_point returned = Clock::now();
  canceller.join();
  expect_error(out.status(), StatusCode::kCancelled,
               {"run cancelled in [Loop] node 'loop0'"});
  const double latency_ms =
      std::chrono::duration<double, std::milli>(returned - cancelled_at)
          .count();
  std::printf("[%s] cancel latency: %.3f ms\n", GetParam().c_str(), latency_ms);
  RecordProperty("cancel_latency_us", static_cast<int>(latency_ms * 1000));
  EXPECT_LT(latency_ms, 5000.0);
  // Runs after the cancel are not cancelled and are correct.
  expect_loop_runs(*session, 2);
}

TEST_P(RunLimits, ADeadlineStopsARunAndTheSessionRunsOn) {
  auto session = make_session(GetParam(), loop_graph(2));
  ASSERT_NE(session, nullptr);
  SessionRunOptions bounded;
  bounded.timeout_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  expect_error(
      session->run(loop_feeds(kHuge, 2), bounded).status(),
      StatusCode::kDeadlineExceeded,
      {"deadline of 200 ms exceeded in [Loop] node 'loop0'", "--timeout"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  expect_loop_runs(*session, 2);

  // The session's own timeout, and a run that overrides it with none.
  Limits limits;
  limits.run_timeout_ms = 100;
  session = make_session(GetParam(), loop_graph(2), limits);
  ASSERT_NE(session, nullptr);
  expect_error(session->run(loop_feeds(kHuge, 2)).status(),
               StatusCode::kDeadlineExceeded, {"deadline of 100 ms exceeded"});
  SessionRunOptions unbounded;
  unbounded.timeout_ms = 0;
  auto out = session->run(loop_feeds(1000, 2), unbounded);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out->at("v_final").element_f64(0), 1000.0);
}

TEST_P(RunLimits, AStreamStepThatTimesOutLeavesTheStateAsItWas) {
  auto session = make_session(GetParam(), stateful_loop_graph());
  ASSERT_NE(session, nullptr);
  Stream stream(*session);
  auto step = [&](float x, int64_t m, SessionRunOptions options = {}) {
    return stream.run({{"x", Tensor::from_vector<float>({2}, {x, x})},
                       {"m", Tensor::scalar<int64_t>(m)}},
                      options);
  };
  ASSERT_TRUE(step(1, 1).is_ok());
  ASSERT_TRUE(step(2, 1).is_ok());  // state (3, 3)
  SessionRunOptions bounded;
  bounded.timeout_ms = 100;
  expect_error(step(100, kHuge, bounded).status(),
               StatusCode::kDeadlineExceeded, {"deadline of 100 ms exceeded"});
  EXPECT_EQ(stream.snapshot().at("past").element_f64(0), 3.0);

  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    session->cancel();
  });
  Status cancelled = step(100, kHuge).status();
  canceller.join();
  expect_error(cancelled, StatusCode::kCancelled,
               {"run cancelled in [Loop] node 'loop0'"});
  EXPECT_EQ(stream.snapshot().at("past").element_f64(0), 3.0);

  ASSERT_TRUE(step(4, 1).is_ok());
  EXPECT_EQ(stream.snapshot().at("past").element_f64(1), 7.0);
}

INSTANTIATE_TEST_SUITE_P(HostBackends, RunLimits,
                         ::testing::ValuesIn(host_backends()),
                         [](const auto& info) { return info.param; });

// An ONNX initializer declaring 2^33 floats (32 GiB) and holding none: the
// load fails on the limit before it allocates, naming the initializer.
TEST(RunLimitsAtLoad, AnOversizedInitializerIsALimitErrorNotAnAllocation) {
  onnx::ModelProto model = onnx_test::make_model(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  auto* tensor = graph.add_initializer();
  tensor->set_name("w");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(int64_t{1} << 33);
  onnx_test::add_input(graph, "x", onnx::TensorProto::FLOAT, {2});
  onnx_test::add_node(graph, "Add", {"x", "w"}, {"y"});
  onnx_test::add_output(graph, "y", onnx::TensorProto::FLOAT, {2});
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("seqrt_oversized_" + std::to_string(::getpid()) + ".onnx"))
          .string();
  {
    std::ofstream file(path, std::ios::binary);
    file << onnx_test::serialize(model);
  }
  Result<std::unique_ptr<Session>> session = Session::load(path, {});
  std::filesystem::remove(path);
  expect_error(
      session.status(), StatusCode::kLimitExceeded,
      {"initializer 'w'", "32.0 GiB", "above max_tensor_bytes (16.0 GiB)"});

  SessionOptions small;
  small.limits.max_tensor_bytes = 1 << 20;
  tensor->clear_dims();
  tensor->add_dims(1 << 20);  // 4 MiB, declared without its data
  {
    std::ofstream file(path, std::ios::binary);
    file << onnx_test::serialize(model);
  }
  session = Session::load(path, small);
  std::filesystem::remove(path);
  expect_error(session.status(), StatusCode::kLimitExceeded,
               {"'w'", "above max_tensor_bytes (1.0 MiB)"});
}

}  // namespace
}  // namespace seqrt
