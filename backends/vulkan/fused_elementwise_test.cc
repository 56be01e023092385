// seqrt::FusedElementwise on a Vulkan device (lavapipe in CI) against the
// reference backend: inputs broadcast through strides, every op a body may
// hold, a graph the fusion pass rewrote, and bodies over the interpreter's
// limits (instructions, registers) or in f16 refused naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "compiler/passes/passes.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

using BodyFn =
    std::function<ValueId(GraphBuilder&, const std::vector<ValueId>&)>;

Graph built(GraphBuilder&& b) {
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Graph g = std::move(graph).value();
  Status status = infer_graph(g);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return g;
}

// A body over `num_inputs` inputs of `dims` (dtype `dtype`).
std::shared_ptr<Graph> make_body(const std::vector<int64_t>& dims,
                                 size_t num_inputs, const BodyFn& fn,
                                 DType dtype = DType::kF32) {
  GraphBuilder b("body");
  std::vector<ValueId> in;
  for (size_t i = 0; i < num_inputs; ++i) {
    in.push_back(
        b.input("x" + std::to_string(i), dtype, Shape::from_dims(dims)));
  }
  b.output(fn(b, in), "y");
  return std::make_shared<Graph>(built(std::move(b)));
}

ValueId scalar(GraphBuilder& b, float value) {
  return b.constant("c" + std::to_string(b.graph().values.size()),
                    Tensor::scalar(value));
}

ValueId fused(GraphBuilder& b, const std::string& name,
              std::vector<ValueId> inputs, std::shared_ptr<Graph> body) {
  NodeOptions options;
  options.name = name;
  options.domain = kSeqrtDomain;
  return b.add("FusedElementwise", std::move(inputs),
               {{"body", std::move(body)}}, options);
}

// Runs `graph` on Vulkan and on the reference backend and compares.
void expect_matches_reference(Backend& backend, const Graph& graph,
                              const std::vector<Tensor>& inputs, double tol) {
  auto compiled = backend.compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto want = (*reference)->run(inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = (*compiled)->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor& w = (*want)[o];
    const Tensor& g = (*got)[o];
    ASSERT_EQ(w.dims(), g.dims()) << graph.value(graph.outputs[o]).name;
    int reported = 0;
    for (int64_t i = 0; i < w.num_elements() && reported < 5; ++i) {
      double a = w.element_f64(i), c = g.element_f64(i);
      if (std::abs(a - c) > tol * (1.0 + std::abs(a))) {
        ADD_FAILURE() << graph.value(graph.outputs[o]).name << " element " << i
                      << ": got " << c << ", want " << a;
        ++reported;
      }
    }
  }
}

// Relu((x + bias) · column − s) · middle, with the full-shape input last.
TEST(VulkanFusedElementwise, BroadcastsInputsThroughStrides) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const std::vector<int64_t> out = {4, 7, 33};
  auto body = make_body(out, 5, [](GraphBuilder& b, const auto& in) {
    ValueId h = b.add("Add", {in[4], in[0]});
    h = b.add("Sub", {b.add("Mul", {h, in[1]}), in[2]});
    return b.add("Mul", {b.add("Relu", {h}), in[3]});
  });
  GraphBuilder b("broadcast");
  std::vector<ValueId> in = {b.input("bias", DType::kF32, Shape{33}),
                             b.input("column", DType::kF32, Shape{4, 7, 1}),
                             b.input("s", DType::kF32, Shape{}),
                             b.input("middle", DType::kF32, Shape{7, 1}),
                             b.input("x", DType::kF32, Shape::from_dims(out))};
  b.output(fused(b, "fused", in, body), "y");
  expect_matches_reference(
      *backend, built(std::move(b)),
      {random_uniform_f32({33}, 1, -1, 1),
       random_uniform_f32({4, 7, 1}, 2, -1, 1), Tensor::scalar(0.25f),
       random_uniform_f32({7, 1}, 3, -1, 1), random_uniform_f32(out, 4, -1, 1)},
      1e-5);
}

// Each op a body may hold, one fused node each: op(x[, y]) · 1.5.
TEST(VulkanFusedElementwise, RunsEveryBodyOp) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const std::vector<int64_t> dims = {5, 67};
  GraphBuilder b("every_op");
  ValueId x = b.input("x", DType::kF32, Shape::from_dims(dims));
  ValueId y = b.input("y", DType::kF32, Shape::from_dims(dims));
  struct Case {
    std::string op;
    AttrMap attrs;
  };
  std::vector<Case> cases;
  for (const char* op : {"Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal",
                         "Erf", "Tanh", "Sigmoid", "Relu", "Softplus", "Gelu",
                         "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"}) {
    cases.push_back({op, {}});
  }
  cases.push_back({"Gelu", {{"approximate", std::string("tanh")}}});
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    bool binary = c.op == "Add" || c.op == "Sub" || c.op == "Mul" ||
                  c.op == "Div" || c.op == "Pow" || c.op == "Max" ||
                  c.op == "Min";
    auto body =
        make_body(dims, binary ? 2 : 1, [&](GraphBuilder& bb, const auto& in) {
          ValueId r = bb.add(c.op, in, c.attrs);
          return bb.add("Mul", {r, scalar(bb, 1.5f)});
        });
    std::vector<ValueId> inputs = {x};
    if (binary) inputs.push_back(y);
    b.output(fused(b, c.op + std::to_string(i), inputs, body),
             c.op + std::to_string(i));
  }
  // x in (0.1, 3) keeps Sqrt, Log and Pow in their domains.
  expect_matches_reference(*backend, built(std::move(b)),
                           {random_uniform_f32(dims, 5, 0.1f, 3.0f),
                            random_uniform_f32(dims, 6, -2.0f, 2.0f)},
                           2e-5);
}

// The fusion pass's output runs on Vulkan: SwiGLU gate x·σ(x)·g + 1.
TEST(VulkanFusedElementwise, RunsWhatTheFusionPassMakes) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b("swiglu");
  ValueId x = b.input("x", DType::kF32, Shape{3, 129});
  ValueId g = b.input("g", DType::kF32, Shape{3, 129});
  ValueId h = b.add("Mul", {x, b.add("Sigmoid", {x})});
  b.output(b.add("Add", {b.add("Mul", {h, g}), scalar(b, 1.0f)}), "y");
  Graph graph = built(std::move(b));
  ASSERT_TRUE(fuse_elementwise_pass().run(graph).is_ok());
  ASSERT_EQ(graph.nodes.size(), 1u);
  ASSERT_EQ(graph.nodes[0].op, "FusedElementwise");
  expect_matches_reference(*backend, graph,
                           {random_uniform_f32({3, 129}, 7, -6, 6),
                            random_uniform_f32({3, 129}, 8, -1, 1)},
                           1e-5);
}

void expect_refused(Backend& backend, const Graph& graph,
                    const std::string& what) {
  auto compiled = backend.compile(graph, CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  const std::string message = compiled.status().message();
  EXPECT_NE(message.find("'long_chain'"), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(VulkanFusedElementwise, RefusesABodyOverTheLimitsNamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  // 65 instructions: one over the program's 64.
  auto long_body = make_body({8}, 1, [](GraphBuilder& b, const auto& in) {
    ValueId h = in[0];
    for (int i = 0; i < 65; ++i) h = b.add(i % 2 ? "Tanh" : "Abs", {h});
    return h;
  });
  // 17 values live at once: over the 16 registers.
  auto wide_body = make_body({8}, 1, [](GraphBuilder& b, const auto& in) {
    std::vector<ValueId> live;
    for (int i = 0; i < 17; ++i) {
      live.push_back(b.add("Add", {in[0], scalar(b, static_cast<float>(i))}));
    }
    ValueId sum = live[0];
    for (int i = 1; i < 17; ++i) sum = b.add("Mul", {sum, live[i]});
    return sum;
  });
  for (auto [body, what] :
       {std::pair{long_body, std::string("65 instructions")},
        std::pair{wide_body, std::string("16 registers")}}) {
    GraphBuilder b("limits");
    ValueId x = b.input("x", DType::kF32, Shape{8});
    b.output(fused(b, "long_chain", {x}, body), "y");
    expect_refused(*backend, built(std::move(b)), what);
  }
}

// 17 inputs: one over the 16 bindings the shader reads.
TEST(VulkanFusedElementwise, RefusesTooManyInputsNamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto body = make_body({8}, 17, [](GraphBuilder& b, const auto& in) {
    ValueId sum = in[0];
    for (size_t i = 1; i < in.size(); ++i) sum = b.add("Add", {sum, in[i]});
    return sum;
  });
  GraphBuilder b("inputs");
  std::vector<ValueId> inputs;
  for (int i = 0; i < 17; ++i) {
    inputs.push_back(b.input("x" + std::to_string(i), DType::kF32, Shape{8}));
  }
  b.output(fused(b, "long_chain", inputs, body), "y");
  expect_refused(*backend, built(std::move(b)), "17 inputs");
}

TEST(VulkanFusedElementwise, RefusesF16NamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto body = make_body(
      {8}, 1,
      [](GraphBuilder& b, const auto& in) {
        return b.add("Relu", {b.add("Neg", {in[0]})});
      },
      DType::kF16);
  GraphBuilder b("half");
  ValueId x = b.input("x", DType::kF16, Shape{8});
  b.output(fused(b, "long_chain", {x}, body), "y");
  expect_refused(*backend, built(std::move(b)), "f16");
}

}  // namespace
}  // namespace seqrt::vulkan
