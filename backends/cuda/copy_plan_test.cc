// The CUDA backend's index plans (copy_plan.h) on the host: each plan,
// applied with the same inline offset functions the kernels use, must give
// exactly what the reference kernel of its op gives. Runs without a GPU.
#include "backends/cuda/copy_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"

namespace seqrt::cuda {
namespace {

Tensor ints(const std::vector<int64_t>& values) {
  Tensor t = Tensor::allocate(DType::kI64, {int64_t(values.size())}).value();
  for (size_t i = 0; i < values.size(); ++i) {
    t.mutable_data_as<int64_t>()[i] = values[i];
  }
  return t;
}

// Runs one ONNX node on the reference backend; an empty tensor is an
// omitted optional input.
std::vector<Tensor> reference(const std::string& op,
                              const std::vector<Tensor>& inputs, AttrMap attrs,
                              size_t outputs = 1) {
  GraphBuilder b(op);
  std::vector<ValueId> ids;
  std::vector<Tensor> given;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(b.input("in" + std::to_string(i), inputs[i].dtype(),
                          Shape::from_dims(inputs[i].dims())));
    given.push_back(inputs[i]);
  }
  std::vector<ValueId> out = b.add_node(op, ids, std::move(attrs), outputs);
  for (size_t i = 0; i < out.size(); ++i) {
    b.output(out[i], "out" + std::to_string(i));
  }
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  auto backend = create_backend("reference");
  EXPECT_TRUE(backend.is_ok());
  auto executable = (*backend)->compile(*graph, CompileOptions{});
  EXPECT_TRUE(executable.is_ok()) << executable.status().to_string();
  auto result = (*executable)->run(std::move(given));
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? std::move(result).value() : std::vector<Tensor>{};
}

// Applies a copy plan to `x` into a fresh f32 tensor of `dims`.
Tensor apply(const Tensor& x, const StridedCopy& copy,
             const std::vector<int64_t>& dims) {
  Tensor out = Tensor::allocate(DType::kF32, dims).value();
  run_copy_on_host(x.data(), out.mutable_data(), sizeof(float), copy);
  return out;
}

void expect_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_EQ(got.element_f64(i), want.element_f64(i)) << "element " << i;
  }
}

TEST(CudaCopyPlan, TransposeMatchesReference) {
  Tensor x = random_uniform_f32({2, 3, 4, 5}, 1, -1, 1);
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 1, 2, 3},
                                    {3, 2, 1, 0},
                                    {0, 2, 1, 3},
                                    {1, 0, 3, 2},
                                    {2, 3, 0, 1}}) {
    auto copy = transpose_copy(x.dims(), perm);
    ASSERT_TRUE(copy.is_ok());
    auto want = reference("Transpose", {x}, {{"perm", Attribute(perm)}});
    ASSERT_EQ(want.size(), 1u);
    expect_equal(apply(x, *copy, want[0].dims()), want[0]);
  }
  // The identity merges into one contiguous axis.
  EXPECT_EQ(transpose_copy(x.dims(), {0, 1, 2, 3})->rank, 1);
  EXPECT_FALSE(transpose_copy(x.dims(), {0, 1, 1, 3}).is_ok());
}

TEST(CudaCopyPlan, BroadcastMatchesExpand) {
  Tensor x = random_uniform_f32({3, 1, 4}, 2, -1, 1);
  for (std::vector<int64_t> to : {std::vector<int64_t>{3, 5, 4},
                                  {2, 3, 5, 4},
                                  {3, 1, 4},
                                  {2, 1, 3, 2, 4}}) {
    auto want = reference("Expand", {x, ints(to)}, {});
    ASSERT_EQ(want.size(), 1u);
    auto copy = broadcast_copy(x.dims(), want[0].dims());
    ASSERT_TRUE(copy.is_ok()) << copy.status().to_string();
    expect_equal(apply(x, *copy, want[0].dims()), want[0]);
  }
  EXPECT_FALSE(broadcast_copy({3, 2}, {3, 4}).is_ok());
}

TEST(CudaCopyPlan, SliceMatchesReference) {
  Tensor x = random_uniform_f32({6, 7, 5}, 3, -1, 1);
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    std::vector<int64_t> starts, ends, steps;
  };
  for (const Case& c :
       {Case{{0, 0, 0}, {6, 7, 5}, {1, 1, 1}},
        Case{{1, -5, 4}, {5, 6, 0}, {2, 1, -1}},
        Case{{-1, 0, 0}, {-kMax, kMax, 5}, {-2, 3, 2}},
        Case{{5, 3, 1}, {1, 3, 100}, {1, 1, 1}},  // empty on axis 0
        Case{{100, -100, -1}, {-100, 100, -kMax}, {-1, 1, -1}}}) {
    auto want = reference(
        "Slice",
        {x, ints(c.starts), ints(c.ends), ints({0, 1, 2}), ints(c.steps)}, {});
    ASSERT_EQ(want.size(), 1u);
    std::vector<int64_t> dims;
    auto copy = slice_copy(x.dims(), c.starts, c.ends, c.steps, dims);
    ASSERT_TRUE(copy.is_ok());
    EXPECT_EQ(dims, want[0].dims());
    expect_equal(apply(x, *copy, dims), want[0]);
  }
}

TEST(CudaCopyPlan, ConcatAndSplitPlaceEachPart) {
  std::vector<Tensor> parts = {random_uniform_f32({2, 3, 4}, 4, -1, 1),
                               random_uniform_f32({2, 1, 4}, 5, -1, 1),
                               random_uniform_f32({2, 5, 4}, 6, -1, 1)};
  auto want = reference("Concat", parts, {{"axis", Attribute(int64_t{1})}});
  ASSERT_EQ(want.size(), 1u);
  Tensor whole = Tensor::allocate(DType::kF32, want[0].dims()).value();
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    auto copy = place_part_copy(part.dims(), whole.dims(), 1, offset, true);
    ASSERT_TRUE(copy.is_ok());
    run_copy_on_host(part.data(), whole.mutable_data(), sizeof(float), *copy);
    offset += part.dim(1);
  }
  expect_equal(whole, want[0]);
  // Split cuts the same parts back out.
  offset = 0;
  for (const Tensor& part : parts) {
    auto copy = place_part_copy(part.dims(), whole.dims(), 1, offset, false);
    ASSERT_TRUE(copy.is_ok());
    expect_equal(apply(whole, *copy, part.dims()), part);
    offset += part.dim(1);
  }
}

TEST(CudaCopyPlan, GatherMatchesReferenceAndChecksIndices) {
  Tensor data = random_uniform_f32({3, 5, 2}, 7, -1, 1);
  std::vector<int64_t> index = {4, -1, 0, 2, -5, 3};
  Tensor indices = Tensor::allocate(DType::kI64, {2, 3}).value();
  for (size_t i = 0; i < index.size(); ++i) {
    indices.mutable_data_as<int64_t>()[i] = index[i];
  }
  auto want =
      reference("Gather", {data, indices}, {{"axis", Attribute(int64_t{1})}});
  ASSERT_EQ(want.size(), 1u);
  auto shape = gather_shape(data.dims(), 1, index);
  ASSERT_TRUE(shape.is_ok());
  EXPECT_EQ(index, (std::vector<int64_t>{4, 4, 0, 2, 0, 3}));
  Tensor got = Tensor::allocate(DType::kF32, want[0].dims()).value();
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    got.mutable_data_as<float>()[i] =
        data.data_as<float>()[gather_source(*shape, index.data(), i)];
  }
  expect_equal(got, want[0]);
  std::vector<int64_t> bad = {5};
  EXPECT_FALSE(gather_shape(data.dims(), 1, bad).is_ok());
  EXPECT_FALSE(gather_shape(data.dims(), 3, bad).is_ok());
}

TEST(CudaCopyPlan, WhereBroadcastsThreeWays) {
  Tensor cond = Tensor::allocate(DType::kBool, {4, 1}).value();
  for (int i = 0; i < 4; ++i) cond.set_element_i64(i, i % 2);
  Tensor x = random_uniform_f32({3}, 8, -1, 1);
  Tensor y = random_uniform_f32({2, 1, 1}, 9, -1, 1);
  auto want = reference("Where", {cond, x, y}, {});
  ASSERT_EQ(want.size(), 1u);
  std::vector<int64_t> dims;
  auto index = select_index(cond.dims(), x.dims(), y.dims(), dims);
  ASSERT_TRUE(index.is_ok());
  ASSERT_EQ(dims, want[0].dims());
  Tensor got = Tensor::allocate(DType::kF32, dims).value();
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    int64_t at[3];
    select_offsets(*index, i, at);
    got.mutable_data_as<float>()[i] = cond.element_i64(at[0]) != 0
                                          ? x.data_as<float>()[at[1]]
                                          : y.data_as<float>()[at[2]];
  }
  expect_equal(got, want[0]);
  EXPECT_FALSE(select_index({2}, {3}, {1}, dims).is_ok());
}

TEST(CudaCopyPlan, ReduceIndexCoversEveryAxisSet) {
  Tensor x = random_uniform_f32({3, 4, 5}, 10, -1, 1);
  for (std::vector<int64_t> axes :
       {std::vector<int64_t>{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}}) {
    auto want = reference("ReduceSum", {x, ints(axes)},
                          {{"keepdims", Attribute(int64_t{0})}});
    ASSERT_EQ(want.size(), 1u);
    std::vector<bool> reduced(3, false);
    for (int64_t a : axes) reduced[a] = true;
    auto index = reduce_index(x.dims(), reduced);
    ASSERT_TRUE(index.is_ok());
    ASSERT_EQ(index->outputs, want[0].num_elements());
    for (int64_t o = 0; o < index->outputs; ++o) {
      double sum = 0;
      for (int64_t r = 0; r < index->count; ++r) {
        sum += x.data_as<float>()[axes_offset(index->kept, o) +
                                  axes_offset(index->reduced, r)];
      }
      EXPECT_NEAR(sum, want[0].element_f64(o), 1e-5) << "output " << o;
    }
  }
}

TEST(CudaCopyPlan, AffineSharedByRowsOnlyWhenRowsAgree) {
  EXPECT_TRUE(affine_shared_by_rows({8}, {2, 3, 8}, 2));
  EXPECT_TRUE(affine_shared_by_rows({1, 1, 8}, {2, 3, 8}, 2));
  EXPECT_TRUE(affine_shared_by_rows({3, 8}, {2, 3, 8}, 1));
  // Per-row values, or a block smaller than the normalised axes.
  EXPECT_FALSE(affine_shared_by_rows({2, 1, 8}, {2, 3, 8}, 2));
  EXPECT_FALSE(affine_shared_by_rows({8}, {2, 3, 8}, 1));
  EXPECT_FALSE(affine_shared_by_rows({1}, {2, 3, 8}, 2));
}

TEST(CudaCopyPlan, RankPastEightIsRefusedUnlessItMerges) {
  std::vector<int64_t> dims(10, 2);
  // A plain copy of rank 10 merges into one axis.
  auto identity = broadcast_copy(dims, dims);
  ASSERT_TRUE(identity.is_ok());
  EXPECT_EQ(identity->rank, 1);
  std::vector<int64_t> reverse = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  auto reversed = transpose_copy(dims, reverse);
  EXPECT_EQ(reversed.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace seqrt::cuda
