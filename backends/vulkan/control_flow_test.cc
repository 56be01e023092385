// Control flow on the Vulkan backend. A Scan along axis 0 runs as a loop
// (scan.h): its body recorded once, its recording the same size for any
// length, its results those of the reference backend, an error word set
// at any step reported. A Scan along another axis over a length known at
// compile (fixed, or a symbolic dim bound in CompileOptions) and an If on
// a constant condition run written out and match the reference backend; a
// written-out Scan over an unbound length, an If on a run-time condition
// and a run whose length disagrees with the bound one fail with clear
// errors.
#include <gtest/gtest.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

using testing::run_with_reference;

// A recurrence the body computes: s' = tanh(s·W + x_t), out_t = s'·2; W
// (d×d) read from the enclosing graph.
std::shared_ptr<Graph> recurrence_body(int64_t d) {
  GraphBuilder b("body");
  ValueId s = b.input("s", DType::kF32, Shape{1, d});
  ValueId x = b.input("x_t", DType::kF32, Shape{1, d});
  ValueId w = b.capture("w", DType::kF32, Shape{d, d});
  ValueId next = b.add("Tanh", {b.add("Add", {b.add("MatMul", {s, w}), x})});
  b.output(next, "s_next");
  b.output(b.add("Mul", {next, b.constant("two", Tensor::scalar<float>(2.0f))}),
           "out");
  return std::make_shared<Graph>(std::move(b).build().value());
}

// Scan of the body over x (T, 1, d) from state s0 (1, d); outputs the final
// state and the per-step outputs (T, 1, d). With `axis1` x is (1, T, d) and
// scanned along axis 1 (written out); with `reverse` x and the outputs run
// from the last step to the first.
Graph scan_model(Dim length, int64_t d, bool axis1 = false,
                 bool reverse = false) {
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{1, d});
  ValueId x = b.input("x", DType::kF32,
                      axis1 ? Shape{1, length, d} : Shape{length, 1, d});
  b.input("w", DType::kF32, Shape{d, d});
  const int64_t direction = reverse ? 1 : 0;
  auto outs =
      b.add_node("Scan", {s0, x},
                 {{"body", recurrence_body(d)},
                  {"num_scan_inputs", int64_t{1}},
                  {"scan_input_axes", std::vector<int64_t>{axis1 ? 1 : 0}},
                  {"scan_input_directions", std::vector<int64_t>{direction}},
                  {"scan_output_directions", std::vector<int64_t>{direction}}},
                 2);
  b.output(outs[0], "s_final");
  b.output(outs[1], "ys");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

std::vector<Tensor> scan_inputs(int64_t t, int64_t d, bool axis1 = false) {
  return {random_uniform_f32({1, d}, 1, -1, 1),
          random_uniform_f32(axis1 ? std::vector<int64_t>{1, t, d}
                                   : std::vector<int64_t>{t, 1, d},
                             2, -1, 1),
          random_uniform_f32({d, d}, 3, -0.5, 0.5)};
}

VulkanExecutable& vulkan_executable(std::unique_ptr<Executable>& compiled) {
  return dynamic_cast<VulkanExecutable&>(*compiled);
}

void expect_close(const std::vector<Tensor>& got,
                  const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].dims(), want[i].dims()) << "output " << i;
    for (int64_t e = 0; e < want[i].num_elements(); ++e) {
      EXPECT_NEAR(got[i].element_f64(e), want[i].element_f64(e), 1e-5)
          << "output " << i << " element " << e;
    }
  }
}

TEST(VulkanControlFlow, ScanOverAFixedLengthMatchesTheReference) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  for (bool axis1 : {false, true}) {
    std::vector<Tensor> want, got;
    run_with_reference(*backend, scan_model(Dim(12), 8, axis1),
                       scan_inputs(12, 8, axis1), want, got);
    expect_close(got, want);
  }
}

// One compile over an unbound length runs every length as a loop, each
// equal to the reference's, a long one included; the body (MatMul, Add,
// Tanh, Mul) is its own nodes, not copies.
TEST(VulkanControlFlow, ScanRunsAsALoopForEveryLength) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = scan_model(Dim::symbol("seq"), 8);
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  ASSERT_TRUE(reference.is_ok());
  for (int64_t t : {1, 7, 1024}) {
    SCOPED_TRACE("T = " + std::to_string(t));
    auto want = (*reference)->run(scan_inputs(t, 8));
    auto got = (*compiled)->run(scan_inputs(t, 8));
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
    expect_close(*got, *want);
  }
  auto stats = vulkan_executable(*compiled).recording_stats({{"seq", 7}});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->loop_scans, 1);
}

TEST(VulkanControlFlow, ReversedScanRunsAsALoop) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = scan_model(Dim(9), 4, false, true);
  std::vector<Tensor> want, got;
  run_with_reference(*backend, graph, scan_inputs(9, 4), want, got);
  expect_close(got, want);
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok());
  auto stats = vulkan_executable(*compiled).recording_stats({});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->loop_scans, 1);
}

// With fp16 weights, a weight both the body captures and an outer MatMul
// reads stays fp32: the body's kernels read it as it stands.
TEST(VulkanControlFlow, LoopBodyReadsACapturedWeightAsFp32) {
  VulkanOptions options;
  options.fp16_weights = true;
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{1, 4});
  ValueId x = b.input("x", DType::kF32, Shape{6, 1, 4});
  ValueId w = b.constant("w", random_uniform_f32({4, 4}, 9, -0.5, 0.5));
  auto outs = b.add_node(
      "Scan", {s0, x},
      {{"body", recurrence_body(4)}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(b.add("MatMul", {outs[0], w}), "projected");
  b.output(outs[1], "ys");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  std::vector<Tensor> want, got;
  run_with_reference(*backend, graph,
                     {random_uniform_f32({1, 4}, 1, -1, 1),
                      random_uniform_f32({6, 1, 4}, 2, -1, 1)},
                     want, got);
  expect_close(got, want);
}

// The recording of a loop is the same size for 16 steps and for 4096:
// the same nodes and dispatches; only the submission lists each step.
TEST(VulkanControlFlow, LoopRecordingDoesNotGrowWithTheLength) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto compiled =
      backend->compile(scan_model(Dim::symbol("seq"), 4), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  VulkanExecutable& executable = vulkan_executable(*compiled);
  auto short_scan = executable.recording_stats({{"seq", 16}});
  auto long_scan = executable.recording_stats({{"seq", 4096}});
  ASSERT_TRUE(short_scan.is_ok()) << short_scan.status().to_string();
  ASSERT_TRUE(long_scan.is_ok()) << long_scan.status().to_string();
  EXPECT_EQ(long_scan->loop_scans, 1);
  EXPECT_EQ(long_scan->nodes, short_scan->nodes);
  EXPECT_LT(long_scan->nodes, 16);
  EXPECT_EQ(long_scan->dispatches, short_scan->dispatches);
  EXPECT_EQ(long_scan->submitted - short_scan->submitted, 4096u - 16u);
}

// Body: (s, x_t) -> (x_t, s + x_t): the new state is the body's input,
// made by no node, so it is copied into its buffer each step.
TEST(VulkanControlFlow, LoopStateHandedOnFromAnInput) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder body("body");
  ValueId s = body.input("s", DType::kF32, Shape{3});
  ValueId x = body.input("x_t", DType::kF32, Shape{3});
  body.output(x, "s_next");
  body.output(body.add("Add", {s, x}), "sum");
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{3});
  ValueId xs = b.input("x", DType::kF32, Shape{5, 3});
  auto outs = b.add_node(
      "Scan", {s0, xs},
      {{"body", std::make_shared<Graph>(std::move(body).build().value())},
       {"num_scan_inputs", int64_t{1}}},
      2);
  b.output(outs[0], "s_final");
  b.output(outs[1], "sums");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  std::vector<Tensor> want, got;
  run_with_reference(
      *backend, graph,
      {random_uniform_f32({3}, 5, -1, 1), random_uniform_f32({5, 3}, 6, -1, 1)},
      want, got);
  expect_close(got, want);
}

// A Gather in the body with an index out of range at step 1 of 4: the
// run fails naming the Scan and the Gather, though later steps are fine
// (the error word is zeroed once before the loop, not per step).
TEST(VulkanControlFlow, LoopReportsAnErrorAtAnyStep) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder body("body");
  ValueId s = body.input("s", DType::kF32, Shape{1, 2});
  ValueId index = body.input("i_t", DType::kI64, Shape{1});
  ValueId table = body.capture("table", DType::kF32, Shape{3, 2});
  ValueId next = body.add("Add", {s, body.add("Gather", {table, index})});
  body.output(next, "s_next");
  body.output(body.add("Neg", {next}), "neg");
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{1, 2});
  ValueId indices = b.input("indices", DType::kI64, Shape{4, 1});
  b.input("table", DType::kF32, Shape{3, 2});
  auto outs = b.add_node(
      "Scan", {s0, indices},
      {{"body", std::make_shared<Graph>(std::move(body).build().value())},
       {"num_scan_inputs", int64_t{1}}},
      2);
  b.output(outs[0], "s_final");
  b.output(outs[1], "negs");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto run = [&](std::vector<int64_t> picks) {
    return (*compiled)->run({random_uniform_f32({1, 2}, 7, -1, 1),
                             Tensor::from_vector<int64_t>({4, 1}, picks),
                             random_uniform_f32({3, 2}, 8, -1, 1)});
  };
  auto fine = run({0, 2, 1, -1});
  ASSERT_TRUE(fine.is_ok()) << fine.status().to_string();
  auto bad = run({0, 7, 1, 2});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("[Scan]"), std::string::npos)
      << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("[Gather]"), std::string::npos)
      << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos)
      << bad.status().to_string();
  auto again = run({0, 2, 1, -1});
  EXPECT_TRUE(again.is_ok()) << again.status().to_string();
}

TEST(VulkanControlFlow, ScanOverABoundLength) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = scan_model(Dim::symbol("seq"), 4);
  // Along axis 1 it is written out, so its length must be bound.
  auto unbound = backend->compile(scan_model(Dim::symbol("seq"), 4, true),
                                  CompileOptions{});
  ASSERT_FALSE(unbound.is_ok());
  EXPECT_NE(unbound.status().message().find("dim 'seq': bind it at compile"),
            std::string::npos)
      << unbound.status().to_string();

  CompileOptions bound;
  bound.dim_bindings["seq"] = 5;
  auto compiled = backend->compile(graph, bound);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, bound);
  ASSERT_TRUE(reference.is_ok());
  // Run as a loop, a bound length stays bound too.
  auto want = (*reference)->run(scan_inputs(5, 4));
  auto got = (*compiled)->run(scan_inputs(5, 4));
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  expect_close(*got, *want);
  // Another length than the bound one is refused, not cut short.
  auto other = (*compiled)->run(scan_inputs(7, 4));
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("input 'x' has dims (7,1,4)"),
            std::string::npos)
      << other.status().to_string();
}

// An If on a constant condition whose branch holds a Scan over an unbound
// length: the If is written out and the Scan it brings up runs as a loop.
TEST(VulkanControlFlow, ScanInsideABranchRunsAsALoop) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder branch("then");
  ValueId s0 = branch.capture("s0", DType::kF32, Shape{1, 4});
  ValueId x = branch.capture("x", DType::kF32, Shape{Dim::symbol("seq"), 1, 4});
  branch.capture("w", DType::kF32, Shape{4, 4});
  auto outs = branch.add_node(
      "Scan", {s0, x},
      {{"body", recurrence_body(4)}, {"num_scan_inputs", int64_t{1}}}, 2);
  branch.output(outs[0], "s_final");
  branch.output(outs[1], "ys");
  auto then_branch = std::make_shared<Graph>(std::move(branch).build().value());
  GraphBuilder other("else");
  other.output(
      other.add("Neg", {other.capture("s0", DType::kF32, Shape{1, 4})}),
      "s_final");
  other.output(
      other.add("Neg", {other.capture("x", DType::kF32,
                                      Shape{Dim::symbol("seq"), 1, 4})}),
      "ys");
  GraphBuilder b("if_scan");
  b.input("s0", DType::kF32, Shape{1, 4});
  b.input("x", DType::kF32, Shape{Dim::symbol("seq"), 1, 4});
  b.input("w", DType::kF32, Shape{4, 4});
  auto results =
      b.add_node("If", {b.constant("cond", Tensor::scalar<bool>(true))},
                 {{"then_branch", then_branch},
                  {"else_branch",
                   std::make_shared<Graph>(std::move(other).build().value())}},
                 2);
  b.output(results[0], "s_final");
  b.output(results[1], "ys");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  EXPECT_TRUE(backend->supports(graph, graph.nodes.back()).is_ok());
  std::vector<Tensor> want, got;
  run_with_reference(*backend, graph, scan_inputs(11, 4), want, got);
  expect_close(got, want);
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok());
  auto stats = vulkan_executable(*compiled).recording_stats({{"seq", 11}});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->loop_scans, 1);
}

// If on `cond` choosing Neg(x) or Abs(x).
Graph if_model(bool constant_cond) {
  GraphBuilder then_b("then");
  then_b.output(then_b.add("Neg", {then_b.capture("x", DType::kF32, Shape{6})}),
                "y");
  GraphBuilder else_b("else");
  else_b.output(else_b.add("Abs", {else_b.capture("x", DType::kF32, Shape{6})}),
                "y");
  GraphBuilder b("if");
  ValueId cond = constant_cond ? b.constant("cond", Tensor::scalar<bool>(false))
                               : b.input("cond", DType::kBool, Shape{});
  b.input("x", DType::kF32, Shape{6});
  b.output(b.add("If", {cond},
                 {{"then_branch",
                   std::make_shared<Graph>(std::move(then_b).build().value())},
                  {"else_branch", std::make_shared<Graph>(
                                      std::move(else_b).build().value())}}),
           "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

TEST(VulkanControlFlow, IfOnAConstantConditionRunsItsBranch) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  std::vector<Tensor> want, got;
  run_with_reference(*backend, if_model(true),
                     {random_uniform_f32({6}, 4, -1, 1)}, want, got);
  expect_close(got, want);
}

TEST(VulkanControlFlow, IfOnARunTimeConditionIsRefusedNamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = if_model(false);
  EXPECT_FALSE(backend->supports(graph, graph.nodes[0]).is_ok());
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(compiled.status().message().find("[If]"), std::string::npos);
  EXPECT_NE(compiled.status().message().find("condition is computed at run"),
            std::string::npos)
      << compiled.status().to_string();
}

}  // namespace
}  // namespace seqrt::vulkan
