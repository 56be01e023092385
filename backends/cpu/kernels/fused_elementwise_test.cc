// The FusedElementwise CPU kernel: the register program it compiles, the
// bodies it declines, the prepared kernel, and an output written over its
// input (as the planner places elementwise ops in place).
#include <gtest/gtest.h>

#include <memory>

#include "backends/cpu/kernels/fused_elementwise_program.h"
#include "backends/cpu/kernels/kernel_test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::cpu {
namespace {

using kernel_testing::expect_close;
using kernel_testing::run_kernel;
using kernel_testing::uniform;

std::shared_ptr<Graph> typed(GraphBuilder&& b) {
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  EXPECT_TRUE(infer_graph(*graph).is_ok());
  return std::make_shared<Graph>(std::move(graph).value());
}

// Six unary ops in a row, plus a node nothing reads.
std::shared_ptr<Graph> chain_body() {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, {3, 300});
  ValueId g = b.input("g", DType::kF32, {3, 300});
  ValueId h = x;
  for (const char* op : {"Neg", "Exp", "Softplus", "Tanh", "Abs", "Sqrt"}) {
    h = b.add(op, {h});
  }
  b.add("Relu", {g});  // dead
  b.output(b.add("Mul", {h, g}), "y");
  return typed(std::move(b));
}

Node fused_node(std::shared_ptr<Graph> body, size_t num_inputs) {
  Node node = op_testing::make_node("FusedElementwise", {{"body", body}},
                                    std::vector<bool>(num_inputs, true), 1);
  node.domain = kSeqrtDomain;
  return node;
}

TEST(FusedElementwiseProgram, ReusesRegistersAndSkipsDeadNodes) {
  Result<FusedProgram> program =
      compile_fused_program(fused_node(chain_body(), 2), *chain_body());
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ(program->code.size(), 7u);
  EXPECT_EQ(program->num_registers, 2);
  EXPECT_EQ(program->code.back().out, FusedInstruction::kOutput);
}

TEST(FusedElementwiseProgram, DeclinesOtherOps) {
  GraphBuilder b("matmul");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  b.output(b.add("Relu", {b.add("MatMul", {x, x})}), "y");
  std::shared_ptr<Graph> body = typed(std::move(b));
  Result<FusedProgram> program =
      compile_fused_program(fused_node(body, 1), *body);
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(program.status().message().find("MatMul"), std::string::npos)
      << program.status().message();
}

// Runs `fn` on a context for the node; `placer` may place the output.
Result<Tensor> run_with(const KernelFn& fn, const Node& node,
                        const std::vector<Tensor>& inputs,
                        OutputPlacer placer = nullptr) {
  const OpSchema* schema =
      OpRegistry::global().find(kSeqrtDomain, "FusedElementwise");
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) args.push_back(&t);
  KernelContext ctx(node, *schema, std::move(args));
  if (placer) ctx.set_output_placer(std::move(placer));
  SEQRT_RETURN_IF_ERROR(fn(ctx));
  return ctx.outputs()[0];
}

TEST(FusedElementwiseKernel, PreparedMatchesReference) {
  std::shared_ptr<Graph> body = chain_body();
  Node node = fused_node(body, 2);
  std::vector<Tensor> inputs = {uniform({3, 300}, 1), uniform({3, 300}, 2)};
  const CpuKernel* kernel = kernel_table().find(kSeqrtDomain, node.op);
  ASSERT_NE(kernel, nullptr);
  ASSERT_TRUE(kernel->prepare);
  Graph graph;
  Result<KernelFn> prepared = kernel->prepare(graph, node);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  Result<Tensor> got = run_with(*prepared, node, inputs);
  auto want = run_kernel(false, kSeqrtDomain, node.op, inputs, node.attrs);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  expect_close(*got, (*want)[0], 1e-5);
}

// The output is the block of input 0, as when the planner runs the node in
// place: every element must still see its own input.
TEST(FusedElementwiseKernel, WritesOverItsInput) {
  std::shared_ptr<Graph> body = chain_body();
  Node node = fused_node(body, 2);
  std::vector<Tensor> inputs = {uniform({3, 300}, 3), uniform({3, 300}, 4)};
  auto want = run_kernel(false, kSeqrtDomain, node.op, inputs, node.attrs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  Tensor shared = inputs[0];
  OutputPlacer placer = [shared](size_t, DType, const std::vector<int64_t>&) {
    return shared;
  };
  const CpuKernel* kernel = kernel_table().find(kSeqrtDomain, node.op);
  Result<Tensor> got = run_with(kernel->run, node, inputs, placer);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->data(), inputs[0].data());
  expect_close(*got, (*want)[0], 1e-5);
}

}  // namespace
}  // namespace seqrt::cpu
