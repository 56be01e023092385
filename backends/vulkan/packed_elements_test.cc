// Bools (1 byte) and halves (2 bytes) through the copy-like kernels that
// pack them into 32-bit words (Where, Trilu, Tile; ElementLayout): each
// invocation writes a whole word, including the last, partly filled one, and
// the result matches the reference bit for bit.
#include <cmath>
#include <cstring>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::vulkan {
namespace {

Tensor pattern(DType dtype, std::vector<int64_t> dims, int seed) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (dtype == DType::kBool) {
      t.set_element_i64(i, (i * 7 + seed) % 3 == 0);
    } else {
      t.set_element_f64(i, std::sin(0.7 * double(i) + seed) * 3.0);
    }
  }
  return t;
}

// Builds a one-node graph over `inputs` (graph inputs) and `constants`,
// runs it on Vulkan and on the reference, and compares the bytes.
void expect_same_bytes(const std::string& op, std::vector<Tensor> inputs,
                       std::vector<Tensor> constants, AttrMap attrs = {}) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b(op);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(
        b.input("x" + std::to_string(i), inputs[i].dtype(), inputs[i].shape()));
  }
  for (size_t i = 0; i < constants.size(); ++i) {
    ids.push_back(b.constant("c" + std::to_string(i), constants[i]));
  }
  b.output(b.add(op, ids, std::move(attrs)), "y");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  std::vector<Tensor> want, got;
  testing::run_with_reference(*backend, graph, inputs, want, got);
  ASSERT_FALSE(got.empty());
  const Tensor& w = want[0];
  const Tensor& y = got[0];
  ASSERT_EQ(w.dtype(), y.dtype());
  ASSERT_EQ(w.dims(), y.dims());
  EXPECT_EQ(std::memcmp(w.data(), y.data(), w.byte_size()), 0);
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0);
}

TEST(VulkanPackedElements, WhereOfBoolsAndHalvesBroadcasts) {
  for (DType dtype : {DType::kBool, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_same_bytes("Where",
                      {pattern(DType::kBool, {3, 1, 5}, 1),
                       pattern(dtype, {1, 7, 5}, 2), pattern(dtype, {5}, 3)},
                      {});
  }
}

TEST(VulkanPackedElements, TriluOfBoolsAndHalves) {
  for (DType dtype : {DType::kBool, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_same_bytes("Trilu", {pattern(dtype, {2, 5, 7}, 4)},
                      {Tensor::scalar<int64_t>(1)});
    expect_same_bytes("Trilu", {pattern(dtype, {3, 3}, 5)},
                      {Tensor::scalar<int64_t>(-1)}, {{"upper", int64_t{0}}});
  }
}

TEST(VulkanPackedElements, TileOfBoolsAndHalves) {
  for (DType dtype : {DType::kBool, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_same_bytes("Tile", {pattern(dtype, {3, 1, 3}, 6)},
                      {Tensor::from_vector<int64_t>({3}, {1, 5, 3})});
  }
}

}  // namespace
}  // namespace seqrt::vulkan
