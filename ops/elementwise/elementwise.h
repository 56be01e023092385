// Pieces shared by the elementwise ops: numpy broadcasting of all of a
// node's inputs (at inference and in kernels) and two's-complement integer
// arithmetic without signed overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/shape.h"
#include "graph/status.h"
#include "ops/op_context.h"
#include "ops/util.h"

namespace seqrt {

// The broadcast of every present input's shape; nullopt when a rank is
// unknown. Unbroadcastable fixed dims are an error naming the node.
Result<std::optional<Shape>> infer_broadcast_shape(const InferContext& ctx);

// Concrete broadcasting of a kernel's inputs: the output dims and, for each
// output element, the element of each input that it reads.
class BroadcastLoop {
 public:
  // Every input must be present.
  static Result<BroadcastLoop> create(const KernelContext& ctx);

  const std::vector<int64_t>& out_dims() const { return out_dims_; }
  int64_t num_elements() const { return num_elements_; }
  // Flat index into input `k` for flat output index `i`.
  int64_t index(size_t k, int64_t i) const {
    return indexer_.input_index(k, i);
  }

 private:
  BroadcastLoop(std::vector<int64_t> out_dims, int64_t num_elements,
                const std::vector<std::vector<int64_t>>& input_dims)
      : out_dims_(std::move(out_dims)),
        num_elements_(num_elements),
        indexer_(out_dims_, input_dims) {}

  std::vector<int64_t> out_dims_;
  int64_t num_elements_;
  BroadcastIndexer indexer_;
};

// Integer results wrap around as on two's-complement hardware, as ONNX
// runtimes do; going through uint64 keeps C++ free of signed overflow.
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
inline int64_t wrapping_neg(int64_t a) { return wrapping_sub(0, a); }

}  // namespace seqrt
