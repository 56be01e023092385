// The CUDA backend's shape-op index plans (shape_plan.h) on the host: Tile's
// strided copy, Pad's source map in every mode (with crops) and
// GatherElements' offsets, and Conv's direct sum (to fp32 rounding),
// applied with the same inline functions the kernels run, must give what
// the op's reference kernel gives.
// Runs without a GPU.
#include "backends/cuda/shape_plan.h"

#include <cmath>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/conv_plan.h"
#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"

namespace seqrt::cuda {
namespace {

Tensor ints(const std::vector<int64_t>& values) {
  return Tensor::from_vector<int64_t>({int64_t(values.size())}, values);
}

// One ONNX node on the reference backend.
Tensor reference(const std::string& op, const std::vector<Tensor>& inputs,
                 AttrMap attrs) {
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
  b.output(b.add_node(op, ids, std::move(attrs), 1)[0], "out");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  auto backend = create_backend("reference");
  EXPECT_TRUE(backend.is_ok());
  auto executable = (*backend)->compile(*graph, CompileOptions{});
  EXPECT_TRUE(executable.is_ok()) << executable.status().to_string();
  auto result = (*executable)->run(std::move(given));
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? (*result)[0] : Tensor();
}

void expect_equal(const Tensor& got, const Tensor& want,
                  const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_EQ(got.data_as<float>()[i], want.data_as<float>()[i])
        << what << " element " << i;
  }
}

TEST(CudaShapePlan, TileEqualsReference) {
  for (const auto& [dims, repeats] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{2, 3}, {2, 2}},
           {{2, 3, 4}, {1, 3, 2}},
           {{5}, {4}},
           {{1, 3, 1}, {2, 1, 3}},
           {{2, 2}, {0, 3}}}) {
    Tensor x = random_uniform_f32(dims, 1);
    Tensor want = reference("Tile", {x, ints(repeats)}, {});
    auto copy = tile_copy(dims, repeats);
    ASSERT_TRUE(copy.is_ok()) << copy.status().to_string();
    Tensor got = Tensor::allocate(DType::kF32, want.dims()).value();
    run_copy_on_host(x.data(), got.mutable_data(), sizeof(float), *copy);
    expect_equal(got, want, "Tile " + dims_to_string(dims));
  }
  EXPECT_FALSE(tile_copy({2, 3}, {2}).is_ok());
  EXPECT_FALSE(tile_copy({2, 3}, {2, -1}).is_ok());
}

TEST(CudaShapePlan, PadEveryModeEqualsReference) {
  struct Case {
    std::vector<int64_t> dims, pads;  // pads: begins then ends, every axis
  };
  // Pads wider than the axis (reflect and wrap go round more than once),
  // crops (negative pads) and a size-1 axis.
  for (const Case& c :
       {Case{{3, 4}, {1, 2, 2, 1}}, Case{{2, 3, 4}, {0, 5, 1, 2, 4, 0}},
        Case{{4, 5}, {-1, 2, 1, -2}}, Case{{1, 3}, {2, 0, 1, 3}}}) {
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
      Tensor x = random_uniform_f32(c.dims, 2);
      Tensor fill = Tensor::scalar(0.75f);
      Tensor want = reference("Pad", {x, ints(c.pads), fill},
                              {{"mode", Attribute(std::string(mode))}});
      const size_t rank = c.dims.size();
      std::vector<int64_t> begin(c.pads.begin(), c.pads.begin() + rank);
      auto index =
          pad_index(c.dims, want.dims(), begin, pad_mode(mode).value());
      ASSERT_TRUE(index.is_ok()) << index.status().to_string();
      Tensor got = Tensor::allocate(DType::kF32, want.dims()).value();
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const int64_t src = pad_source(*index, i);
        got.mutable_data_as<float>()[i] =
            src < 0 ? 0.75f : x.data_as<float>()[src];
      }
      expect_equal(got, want, std::string(mode) + " " + dims_to_string(c.pads));
    }
  }
  EXPECT_FALSE(pad_mode("mirror").is_ok());
  // An empty axis cannot be read from.
  EXPECT_FALSE(pad_index({0, 2}, {2, 2}, {1, 0}, PadMode::kEdge).is_ok());
}

TEST(CudaShapePlan, GatherElementsEqualsReference) {
  const std::vector<int64_t> data_dims = {3, 4, 5};
  Tensor data = random_uniform_f32(data_dims, 3);
  for (int64_t axis : {0, 1, 2, -1}) {
    // Indices smaller than data off the axis, negative ones included.
    std::vector<int64_t> index_dims = {2, 3, 4};
    const int64_t size = data_dims[axis < 0 ? 2 : axis];
    const int64_t count = 2 * 3 * 4;
    std::vector<int64_t> values;
    for (int64_t i = 0; i < count; ++i) {
      values.push_back((i * 7) % (2 * size) - size);
    }
    Tensor indices = Tensor::from_vector<int64_t>(index_dims, values);
    Tensor want = reference("GatherElements", {data, indices},
                            {{"axis", Attribute(axis)}});
    std::vector<int64_t> checked = values;
    auto plan = gather_elements_index(data_dims, index_dims,
                                      axis < 0 ? axis + 3 : axis, checked);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    Tensor got = Tensor::allocate(DType::kF32, index_dims).value();
    for (int64_t i = 0; i < count; ++i) {
      got.mutable_data_as<float>()[i] =
          data.data_as<float>()[gather_elements_source(*plan, checked.data(),
                                                       i)];
    }
    expect_equal(got, want, "axis " + std::to_string(axis));
  }
  std::vector<int64_t> bad = {0, 5};
  auto refused = gather_elements_index({2, 5}, {1, 2}, 1, bad);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("index 5"), std::string::npos)
      << refused.status().message();
}

TEST(CudaShapePlan, ConvDirectSumEqualsReference) {
  struct Case {
    std::vector<int64_t> x, w;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      // 1-D, strided and dilated, explicit pads.
      {{2, 4, 17},
       {6, 4, 3},
       {{"strides", Attribute(std::vector<int64_t>{2})},
        {"dilations", Attribute(std::vector<int64_t>{2})},
        {"pads", Attribute(std::vector<int64_t>{2, 1})}}},
      // 2-D grouped (2 groups), SAME_UPPER.
      {{1, 4, 7, 6},
       {6, 2, 3, 2},
       {{"group", Attribute(int64_t{2})},
        {"auto_pad", Attribute(std::string("SAME_UPPER"))}}},
      // 2-D depthwise, SAME_LOWER with stride 2.
      {{2, 3, 8, 5},
       {3, 1, 3, 3},
       {{"group", Attribute(int64_t{3})},
        {"strides", Attribute(std::vector<int64_t>{2, 2})},
        {"auto_pad", Attribute(std::string("SAME_LOWER"))}}},
      // 2-D VALID with a non-square kernel.
      {{1, 2, 5, 5},
       {3, 2, 2, 3},
       {{"auto_pad", Attribute(std::string("VALID"))}}},
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    Tensor x = random_uniform_f32(c.x, ++seed);
    Tensor w = random_uniform_f32(c.w, ++seed);
    Tensor bias = random_uniform_f32({c.w[0]}, ++seed);
    Tensor want = reference("Conv", {x, w, bias}, c.attrs);
    auto ints = [&](const char* name) {
      auto it = c.attrs.find(name);
      return it == c.attrs.end() ? std::vector<int64_t>{}
                                 : it->second.as_ints();
    };
    auto group_attr = c.attrs.find("group");
    auto pad_attr = c.attrs.find("auto_pad");
    auto shape = conv_shape(
        c.x, c.w, want.dims(),
        group_attr == c.attrs.end() ? 1 : group_attr->second.as_int(),
        ints("strides"), ints("dilations"), ints("pads"),
        pad_attr == c.attrs.end() ? "NOTSET" : pad_attr->second.as_string());
    ASSERT_TRUE(shape.is_ok()) << shape.status().to_string();
    ASSERT_EQ(shape->outputs(), want.num_elements());
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      const int64_t m = (i / (shape->out_w * shape->out_h)) % c.w[0];
      const float got =
          conv_output(*shape, x.data_as<float>(), w.data_as<float>(), i) +
          bias.data_as<float>()[m];
      ASSERT_NEAR(got, want.data_as<float>()[i],
                  1e-5 * (1 + std::abs(want.data_as<float>()[i])))
          << "X " << dims_to_string(c.x) << " element " << i;
    }
  }
  EXPECT_EQ(conv_shape({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1}, {1, 1, 2, 2, 2}, 1, {},
                       {}, {}, "NOTSET")
                .status()
                .code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace seqrt::cuda
