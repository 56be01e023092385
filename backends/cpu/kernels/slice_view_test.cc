// A Slice that is one contiguous run of its input comes back as a view of
// the input's storage at the run's byte offset (where the memory plan puts
// it, compiler/planner/slice_view.h), with the reference's values; other
// slices are copies.
#include <gtest/gtest.h>

#include "backends/cpu/arena_run.h"
#include "backends/cpu/kernels/kernel_test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT
using op_testing::ints;

// Runs the CPU and the reference Slice; returns the CPU output.
Tensor slice_like_reference(const std::vector<Tensor>& inputs) {
  auto want = run_kernel(false, kOnnxDomain, "Slice", inputs, {}, 1);
  auto got = run_kernel(true, kOnnxDomain, "Slice", inputs, {}, 1);
  EXPECT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_TRUE(got.is_ok()) << got.status().to_string();
  if (!want.is_ok() || !got.is_ok()) return Tensor();
  EXPECT_TRUE((*got)[0].same_as((*want)[0]));
  return (*got)[0];
}

const char* byte_at(const Tensor& tensor, int64_t offset) {
  return static_cast<const char*>(tensor.data()) + offset;
}

TEST(CpuSliceView, ContiguousRunsShareTheInputsStorage) {
  Tensor x = uniform({4, 6, 8}, 7);
  // Rows 1..2 of the first axis: 2 * 48 floats from float 48.
  Tensor rows = slice_like_reference({x, ints({1}), ints({3}), ints({0})});
  EXPECT_EQ(rows.data(), byte_at(x, 48 * 4));
  EXPECT_TRUE(rows.is_view());
  // x[2, 1:3, :]: one run inside a row of the first axis, not 64-byte
  // aligned.
  Tensor run =
      slice_like_reference({x, ints({2, 1}), ints({3, 3}), ints({0, 1})});
  EXPECT_EQ(run.dims(), std::vector<int64_t>({1, 2, 8}));
  EXPECT_EQ(run.data(), byte_at(x, (2 * 48 + 8) * 4));
  // x[3, 5, 2:7] with the whole axes after it: ends past the end clamp.
  Tensor tail = slice_like_reference(
      {x, ints({3, 5, 2}), ints({4, 100, 7}), ints({0, 1, 2})});
  EXPECT_EQ(tail.data(), byte_at(x, (3 * 48 + 5 * 8 + 2) * 4));
}

TEST(CpuSliceView, StridedSlicesAreCopies) {
  Tensor x = uniform({4, 6, 8}, 8);
  const char* begin = byte_at(x, 0);
  const char* end = byte_at(x, static_cast<int64_t>(x.byte_size()));
  for (const std::vector<Tensor>& inputs :
       {std::vector<Tensor>{x, ints({1}), ints({3}), ints({1})},
        std::vector<Tensor>{x, ints({0}), ints({4}), ints({0}), ints({2})},
        std::vector<Tensor>{x, ints({3}), ints({0}), ints({0}), ints({-1})}}) {
    Tensor out = slice_like_reference(inputs);
    const char* at = static_cast<const char*>(out.data());
    EXPECT_TRUE(at < begin || at >= end) << "a strided slice was a view";
  }
}

TEST(CpuSliceView, TheViewKeepsTheStorageAlive) {
  Tensor expected;
  Tensor view;
  {
    Tensor x = uniform({3, 5}, 9);
    view = slice_like_reference({x, ints({1}), ints({2}), ints({0})});
    expected = view.clone();
  }
  EXPECT_TRUE(view.same_as(expected));
}

Result<KernelFn> cpu_kernel(const Node& node, const OpSchema&) {
  const CpuKernel* kernel = kernel_table().find(node.domain, node.op);
  if (kernel == nullptr) return not_found("no CPU kernel for {}", node.op);
  return kernel->run;
}

// a = Neg(x) in the arena; rows = a[2:6] is planned as a view of a at byte
// 2 * 16 * 4, and the kernel's view lands exactly there, so the run from
// the plan copies nothing out and matches the run on the heap.
TEST(CpuSliceView, TheKernelsViewIsWhereThePlanPutsIt) {
  GraphBuilder b("slice_view");
  ValueId x = b.input("x", DType::kF32, Shape{8, 16});
  ValueId a = b.add("Neg", {x});
  ValueId rows = b.add("Slice", {a, b.constant("starts", op_testing::ints({2})),
                                 b.constant("ends", op_testing::ints({6})),
                                 b.constant("axes", op_testing::ints({0}))});
  b.output(b.add("Softmax", {rows}), "y");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  ArenaRunner runner(graph);
  Tensor input = uniform({8, 16}, 10);
  auto heap = interpret_graph(graph, {input}, cpu_kernel, nullptr, {});
  auto planned = runner.run({input}, cpu_kernel, {});
  ASSERT_TRUE(heap.is_ok()) << heap.status().to_string();
  ASSERT_TRUE(planned.is_ok()) << planned.status().to_string();
  EXPECT_TRUE((*planned)[0].same_as((*heap)[0]));
  EXPECT_EQ(runner.stats().copied_out, 0);
  EXPECT_GE(runner.stats().placed, 1) << "Neg's output";
  std::shared_ptr<const MemoryPlan> plan = runner.plan_for({input});
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->values[rows].alias_of, a);
  EXPECT_EQ(plan->values[rows].offset, plan->values[a].offset + 2 * 16 * 4);
}

}  // namespace
}  // namespace seqrt::cpu
