#include "compiler/passes/compute_f16_in_f32.h"

#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_close;
using pass_testing::run_reference;

Tensor to_f16(const Tensor& t) {
  Tensor half = Tensor::allocate(DType::kF16, t.dims()).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    half.set_element_f64(i, t.element_f64(i));
  }
  return half;
}

// An f16 model: y = Relu(x W + ConstantOfShape(1.5)), z = Cast<f16>(f32
// input u) + x handed on, x also handed straight out.
Graph f16_model() {
  GraphBuilder b("f16");
  ValueId x = b.input("x", DType::kF16, Shape{3, 4});
  ValueId u = b.input("u", DType::kF32, Shape{3, 4});
  ValueId w = b.constant("w", to_f16(pass_testing::random_tensor({4, 4}, 1)));
  ValueId shape =
      b.constant("shape", Tensor::from_vector<int64_t>({2}, {3, 4}));
  ValueId fill =
      b.add("ConstantOfShape", {shape},
            {{"value", to_f16(Tensor::from_vector<float>({1}, {1.5f}))}});
  ValueId y = b.add("Relu", {b.add("Add", {b.add("MatMul", {x, w}), fill})});
  b.output(y, "y");
  ValueId cast = b.add("Cast", {u}, {{"to", int64_t{10}}});
  b.output(b.add("Add", {cast, x}), "z");
  b.output(x);
  return build_or_die(std::move(b));
}

TEST(ComputeF16InF32, KeepsTheEdgesAndComputesInF32) {
  Graph graph = f16_model();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  Graph before = graph;
  Result<bool> changed = compute_f16_in_f32(graph);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(infer_graph(graph).is_ok());
  // The interface is unchanged; inside, only the edges are f16.
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    EXPECT_EQ(graph.value(graph.inputs[i]).dtype,
              before.value(before.inputs[i]).dtype);
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    EXPECT_EQ(graph.value(graph.outputs[i]).dtype,
              before.value(before.outputs[i]).dtype);
  }
  int f16_values = 0;
  for (const Value& value : graph.values)
    f16_values += value.dtype == DType::kF16;
  EXPECT_EQ(f16_values, 3);  // x, y and z
  for (const auto& [id, tensor] : graph.constants) {
    EXPECT_NE(tensor.dtype(), DType::kF16) << graph.value(id).name;
  }

  std::map<std::string, Tensor> feeds = {
      {"x", to_f16(pass_testing::random_tensor({3, 4}, 2))},
      {"u", pass_testing::random_tensor({3, 4}, 3)}};
  std::map<std::string, Tensor> want = run_reference(before, feeds);
  std::map<std::string, Tensor> got = run_reference(graph, feeds);
  for (const char* name : {"y", "z", "x"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(got.count(name) && want.count(name));
    expect_close(got.at(name), want.at(name), 2e-3);
  }
}

TEST(ComputeF16InF32, LeavesF32GraphsAlone) {
  GraphBuilder b("f32");
  ValueId x = b.input("x", DType::kF32, Shape{2});
  b.output(b.add("Relu", {x}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph before = graph;
  Result<bool> changed = compute_f16_in_f32(graph);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(*changed);
  EXPECT_TRUE(graphs_equal(graph, before));
}

}  // namespace
}  // namespace seqrt
