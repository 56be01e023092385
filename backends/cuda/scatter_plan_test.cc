// The CUDA scatter kernels' host code (scatter_plan.h) on the host: the
// grouping by destination, and the op's plan applied group by group with
// the kernels' own scatter_group_apply — in any group order, as the device
// runs them — equal to the reference kernel, duplicates included; GatherND's
// plan read through the kernel's gather_slice_source, equal to its reference.
#include "backends/cuda/scatter_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "ops/shape/gather_nd.h"
#include "ops/shape/scatter.h"

namespace seqrt::cuda {
namespace {

std::vector<int64_t> slice_of(const ScatterGroups& g, int64_t at,
                              int64_t count) {
  return {g.packed.begin() + at, g.packed.begin() + at + count};
}

TEST(CudaScatterPlan, GroupsUpdatesByDestinationInNodeOrder) {
  ScatterPlan plan;
  plan.reduction = ScatterReduction::kAdd;
  plan.offsets = {5, 2, 5, 7, 2, 5};
  ScatterGroups g = group_scatter(plan);
  ASSERT_EQ(g.groups, 3);
  EXPECT_EQ(slice_of(g, g.targets_at(), 3), (std::vector<int64_t>{2, 5, 7}));
  EXPECT_EQ(slice_of(g, g.starts_at(), 4), (std::vector<int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(slice_of(g, g.order_at(), 6),
            (std::vector<int64_t>{1, 4, 0, 2, 5, 3}));
  // Without a reduction the last update of each destination alone.
  plan.reduction = ScatterReduction::kNone;
  g = group_scatter(plan);
  ASSERT_EQ(g.groups, 3);
  EXPECT_EQ(slice_of(g, g.starts_at(), 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(slice_of(g, g.order_at(), 3), (std::vector<int64_t>{4, 5, 3}));
  plan.offsets.clear();
  g = group_scatter(plan);
  EXPECT_EQ(g.groups, 0);
  EXPECT_EQ(g.packed, (std::vector<int64_t>{0}));  // starts = {0}
}

TEST(CudaScatterPlan, CombineFollowsTheReduction) {
  ScatterPlan plan;
  const std::pair<ScatterReduction, ScatterCombine> pairs[] = {
      {ScatterReduction::kNone, ScatterCombine::kReplace},
      {ScatterReduction::kAdd, ScatterCombine::kAdd},
      {ScatterReduction::kMul, ScatterCombine::kMul},
      {ScatterReduction::kMax, ScatterCombine::kMax},
      {ScatterReduction::kMin, ScatterCombine::kMin}};
  for (const auto& [reduction, combine] : pairs) {
    plan.reduction = reduction;
    EXPECT_EQ(scatter_combine_of(plan), combine);
  }
}

// The op's plan for `inputs`, applied as the device does (groups in
// reverse order), against the reference kernel.
template <typename T>
void expect_like_reference(const std::string& op,
                           const std::vector<Tensor>& inputs,
                           const AttrMap& attrs) {
  SCOPED_TRACE(op);
  Result<std::vector<Tensor>> want = op_testing::run_op(op, inputs, attrs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  Node node = op_testing::make_node(op, attrs, {true, true, true}, 1);
  const OpSchema& schema = op_testing::schema_of(op);
  KernelContext ctx(node, schema, {&inputs[0], &inputs[1], &inputs[2]});
  Result<ScatterPlan> plan =
      op == "ScatterND" ? plan_scatter_nd(ctx) : plan_scatter_elements(ctx);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const ScatterGroups g = group_scatter(*plan);
  const ScatterGroupsView view{
      g.packed.data() + g.targets_at(), g.packed.data() + g.starts_at(),
      g.packed.data() + g.order_at(), g.groups, plan->slice};
  std::vector<T> out(
      inputs[kScatterData].data_as<T>(),
      inputs[kScatterData].data_as<T>() + inputs[kScatterData].num_elements());
  const ScatterReduction reduction = plan->reduction;
  auto combine = [reduction](T current, T update) {
    return scatter_combine(reduction, current, update);
  };
  for (int64_t i = g.groups * plan->slice - 1; i >= 0; --i) {
    scatter_group_apply(view, i, inputs[kScatterUpdates].data_as<T>(),
                        out.data(), combine);
  }
  const Tensor& expected = (*want)[0];
  ASSERT_EQ(static_cast<int64_t>(out.size()), expected.num_elements());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i], expected.data_as<T>()[i]) << "element " << i;
  }
}

Tensor f32(std::vector<int64_t> dims, float start) {
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.mutable_data_as<float>()[i] = start + 0.37f * static_cast<float>(i);
  }
  return t;
}

TEST(CudaScatterPlan, ScatterNDMatchesReferenceWithDuplicates) {
  const Tensor data = f32({6, 7}, -4.0f);
  const Tensor rows = op_testing::i64({4, 1}, {1, -1, 1, 3});
  const Tensor updates = f32({4, 7}, 1.5f);
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(reduction);
    expect_like_reference<float>("ScatterND", {data, rows, updates},
                                 {{"reduction", std::string(reduction)}});
  }
  // Single elements of an int64 tensor, a repeated one multiplied.
  Tensor ints =
      op_testing::i64({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  expect_like_reference<int64_t>(
      "ScatterND",
      {ints, op_testing::i64({3, 2}, {0, 0, 2, 3, 0, 0}),
       op_testing::i64({3}, {-3, 5, 7})},
      {{"reduction", std::string("mul")}});
}

TEST(CudaScatterPlan, ScatterElementsMatchesReferenceWithDuplicates) {
  const Tensor data = f32({3, 5}, 2.0f);
  const Tensor index =
      op_testing::i64({3, 4}, {0, 4, 0, -1, 1, 1, 2, 3, -5, 0, 0, 2});
  const Tensor updates = f32({3, 4}, -1.0f);
  for (const char* reduction : {"none", "add", "max"}) {
    SCOPED_TRACE(reduction);
    expect_like_reference<float>(
        "ScatterElements", {data, index, updates},
        {{"axis", int64_t{1}}, {"reduction", std::string(reduction)}});
  }
  expect_like_reference<float>(
      "ScatterElements",
      {f32({4, 3}, 0.5f), op_testing::i64({2, 3}, {3, 0, 1, -1, 2, 0}),
       f32({2, 3}, 9.0f)},
      {{"axis", int64_t{0}}});
}

TEST(CudaScatterPlan, BlocksStayWithinTheGrid) {
  EXPECT_EQ(scatter_blocks(0), 0);
  EXPECT_EQ(scatter_blocks(1), 1);
  EXPECT_EQ(scatter_blocks(257), 2);
  EXPECT_EQ(scatter_blocks(int64_t{1} << 40), 65535);
}

TEST(CudaScatterPlan, GatherNDSourcesMatchReference) {
  const Tensor data = f32({2, 3, 4}, -2.0f);
  const struct {
    Tensor indices;
    int64_t batch_dims;
  } cases[] = {{op_testing::i64({2, 2}, {1, -1, 0, 2}), 0},
               {op_testing::i64({2, 1, 1}, {2, -3}), 1},
               {op_testing::i64({2, 3, 1}, {3, 0, -1, 1, 1, 2}), 2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.batch_dims);
    const AttrMap attrs = {{"batch_dims", c.batch_dims}};
    Result<std::vector<Tensor>> want =
        op_testing::run_op("GatherND", {data, c.indices}, attrs);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    Node node = op_testing::make_node("GatherND", attrs, {true, true}, 1);
    KernelContext ctx(node, op_testing::schema_of("GatherND"),
                      {&data, &c.indices});
    Result<GatherNdPlan> plan = plan_gather_nd(ctx);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    const Tensor& expected = (*want)[0];
    ASSERT_EQ(plan->out_dims, expected.dims());
    for (int64_t i = 0; i < expected.num_elements(); ++i) {
      const int64_t source = gather_slice_source(plan->slices.offsets.data(),
                                                 plan->slices.slice, i);
      EXPECT_EQ(data.data_as<float>()[source], expected.data_as<float>()[i])
          << "element " << i;
    }
  }
}

}  // namespace
}  // namespace seqrt::cuda
