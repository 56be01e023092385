// The CPU backend runs from the graph-level memory plan: intermediates land
// in one reused arena, results equal the run that allocates every tensor,
// outputs never point into the arena, and an alias the plan does not know
// of is copied out before its block can be reused.
#include "backends/cpu/arena_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "backends/cpu/kernel_table.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/registry.h"
#include "testing/random_tensor.h"

namespace seqrt::cpu {
namespace {

// x (seq, 16) -> MatMul -> Add -> Relu -> Mul -> Softmax -> LayerNorm -> y.
Graph mlp_graph() {
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("seq"), 16});
  ValueId w = b.constant("w", random_uniform_f32({16, 32}, 1));
  ValueId bias = b.constant("bias", random_uniform_f32({32}, 2));
  ValueId two = b.constant("two", Tensor::scalar(2.0f));
  ValueId h = b.add("Relu", {b.add("Add", {b.add("MatMul", {x, w}), bias})});
  ValueId s = b.add("Softmax", {b.add("Mul", {h, two})});
  ValueId gamma = b.constant("gamma", random_uniform_f32({32}, 3));
  b.output(b.add("LayerNormalization", {s, gamma}), "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

std::vector<KernelFn> cpu_kernels(const Graph& graph) {
  std::vector<KernelFn> kernels;
  for (const Node& node : graph.nodes) {
    kernels.push_back(kernel_table().find(node.domain, node.op)->run);
  }
  return kernels;
}

Result<KernelFn> no_chooser(const Node& node, const OpSchema&) {
  return internal_error("{}: every kernel was chosen ahead", node.label());
}

bool points_into(const Tensor& tensor, const Tensor& other) {
  return tensor.data() == other.data();
}

TEST(ArenaRunner, PlacesIntermediatesAndMatchesTheHeapRun) {
  Graph graph = mlp_graph();
  Schedule schedule = schedule_graph(graph).value();
  std::vector<KernelFn> kernels = cpu_kernels(graph);
  InterpretOptions options;
  options.schedule = &schedule;
  options.kernels = &kernels;
  ArenaRunner runner(graph);

  Tensor x = random_uniform_f32({24, 16}, 7);
  std::vector<Tensor> heap =
      interpret_graph(graph, {x}, no_chooser, nullptr, options).value();
  // A binding met for the first time runs on the heap, unplanned.
  std::vector<Tensor> unplanned = runner.run({x}, no_chooser, options).value();
  EXPECT_TRUE(unplanned[0].same_as(heap[0]));
  EXPECT_EQ(runner.stats().plans_made, 0);
  EXPECT_EQ(runner.stats().first_sights, 1);
  EXPECT_EQ(runner.stats().placed, 0);
  std::vector<Tensor> planned = runner.run({x}, no_chooser, options).value();
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_TRUE(planned[0].same_as(heap[0]));
  ArenaRunner::Stats stats = runner.stats();
  EXPECT_EQ(stats.plans_made, 1);
  EXPECT_EQ(stats.arenas_made, 1);
  EXPECT_GE(stats.placed, 4) << "MatMul, Add, Relu, Mul and Softmax outputs";
  EXPECT_EQ(stats.copied_out, 0);

  // The same binding reuses plan and arena; the first result is untouched
  // by the second run (outputs never point into the arena).
  Tensor first = planned[0].clone();
  std::vector<Tensor> again =
      runner.run({random_uniform_f32({24, 16}, 8)}, no_chooser, options)
          .value();
  EXPECT_TRUE(planned[0].same_as(first));
  EXPECT_FALSE(points_into(again[0], planned[0]));
  EXPECT_EQ(runner.stats().plans_made, 1);
  EXPECT_EQ(runner.stats().arenas_made, 1);

  // A new binding gets its own plan when it comes again.
  Tensor longer = random_uniform_f32({40, 16}, 9);
  std::vector<Tensor> long_heap =
      interpret_graph(graph, {longer}, no_chooser, nullptr, options).value();
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor> long_planned =
        runner.run({longer}, no_chooser, options).value();
    EXPECT_TRUE(long_planned[0].same_as(long_heap[0]));
  }
  EXPECT_EQ(runner.stats().plans_made, 2);
  EXPECT_EQ(runner.stats().first_sights, 2);
}

TEST(ArenaRunner, AnAliasThePlanDoesNotKnowIsCopiedOut) {
  // r = Relu(x); s = Softmax(r), whose kernel here hands back r itself (an
  // alias the plan cannot know of); t = Tanh(x) is planned after r dies and
  // may take r's block; y = s + t. Without the copy, t would overwrite s.
  GraphBuilder b("alias");
  ValueId x = b.input("x", DType::kF32, Shape{64, 64});
  ValueId r = b.add("Relu", {x});
  ValueId s = b.add("Softmax", {r});
  ValueId t = b.add("Tanh", {x});
  b.output(b.add("Add", {s, t}), "y");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  std::vector<KernelFn> kernels = cpu_kernels(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].op != "Softmax") continue;
    kernels[i] = [](KernelContext& ctx) {
      ctx.set_output(0, *ctx.input(0));
      return Status::ok();
    };
  }
  Schedule schedule = schedule_graph(graph).value();
  InterpretOptions options;
  options.schedule = &schedule;
  options.kernels = &kernels;
  ArenaRunner runner(graph);
  Tensor input = random_uniform_f32({64, 64}, 11);
  std::vector<Tensor> y = runner.run({input}, no_chooser, options).value();
  EXPECT_EQ(runner.stats().copied_out, 1);
  const float* px = input.data_as<float>();
  const float* py = y[0].data_as<float>();
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    ASSERT_FLOAT_EQ(py[i], std::max(px[i], 0.0f) + std::tanh(px[i]))
        << "element " << i;
  }
}

TEST(ArenaRunner, ShapeArithmeticRunsOncePerBindingNotPerRun) {
  // y = Reshape(Relu(x), [x.dim(1), x.dim(0)]), the shape built from
  // Shape -> Gather -> Unsqueeze -> Concat as exports build it.
  GraphBuilder b("shape_chain");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("seq"), 4});
  ValueId shape = b.add("Shape", {x});
  ValueId axes = b.constant("axes", Tensor::from_vector<int64_t>({1}, {0}));
  auto dim = [&](int64_t axis) {
    ValueId index = b.constant("axis" + std::to_string(axis),
                               Tensor::scalar<int64_t>(axis));
    return b.add("Unsqueeze", {b.add("Gather", {shape, index}), axes});
  };
  ValueId new_shape =
      b.add("Concat", {dim(1), dim(0)}, {{"axis", Attribute(int64_t{0})}});
  b.output(b.add("Reshape", {b.add("Relu", {x}), new_shape}), "y");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  // Every kernel counts its calls; the shape ops' must stay at zero.
  std::vector<KernelFn> kernels = cpu_kernels(graph);
  std::vector<int> calls(graph.nodes.size(), 0);
  for (size_t i = 0; i < kernels.size(); ++i) {
    kernels[i] = [run = kernels[i], &count = calls[i]](KernelContext& ctx) {
      ++count;
      return run(ctx);
    };
  }
  Schedule schedule = schedule_graph(graph).value();
  InterpretOptions options;
  options.schedule = &schedule;
  options.kernels = &kernels;
  ArenaRunner runner(graph);
  for (int64_t seq : {3, 5, 3}) {
    Tensor input = random_uniform_f32({seq, 4}, 13);
    std::vector<Tensor> heap =
        interpret_graph(graph, {input}, no_chooser, nullptr, options).value();
    // The first sight of a binding runs unplanned; the plan comes next.
    ASSERT_TRUE(runner.run({input}, no_chooser, options).is_ok());
    std::fill(calls.begin(), calls.end(), 0);
    std::vector<Tensor> y = runner.run({input}, no_chooser, options).value();
    EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{4, seq}));
    EXPECT_TRUE(y[0].same_as(heap[0]));
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const std::string& op = graph.nodes[n].op;
      EXPECT_EQ(calls[n], op == "Relu" || op == "Reshape" ? 1 : 0) << op;
    }
  }
  EXPECT_EQ(runner.stats().plans_made, 2) << "seq 3 planned once";
}

}  // namespace
}  // namespace seqrt::cpu
