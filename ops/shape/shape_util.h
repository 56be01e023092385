// Helpers shared by the ops of ops/shape/ (and the linalg ops that read
// integer inputs): byte-exact element copies, integer inputs read as data,
// axis lists and a row-major coordinate counter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

// Copies `count` consecutive elements from `src` (starting at `src_index`)
// to `dst` (starting at `dst_index`) byte for byte, so data-movement ops
// keep every bit of every dtype. Both tensors must have the same dtype.
void copy_elements(const Tensor& src, int64_t src_index, Tensor& dst,
                   int64_t dst_index, int64_t count = 1);

// The values of an integer tensor of rank 0 or 1 that an op reads as data
// (Reshape's shape, Slice's starts); `what` names it in errors.
Result<std::vector<int64_t>> read_int_list(const OpContext& ctx,
                                           const Tensor& tensor,
                                           const char* what);
// The value of an integer tensor with exactly one element (Trilu's k).
Result<int64_t> read_int_scalar(const OpContext& ctx, const Tensor& tensor,
                                const char* what);

// At inference time: fails when input `i` is present but not an integer
// type; otherwise its values when they are known, nullopt when not.
Result<std::optional<std::vector<int64_t>>> known_int_list(
    const InferContext& ctx, size_t i, const char* what);
// The length of 1-D input `i` when its shape tells it.
std::optional<int64_t> known_length(const InferContext& ctx, size_t i);

// Fails when a fixed dim (declared in an untrusted graph) is larger than
// kMaxElements, so that shape arithmetic on it cannot overflow.
Status check_dim_size(const OpContext& ctx, const Dim& dim);

// A shape of `rank` unknown dims.
Shape unknown_shape(size_t rank);

// Maps axes into [0, rank); out-of-range and repeated axes are errors.
Result<std::vector<int64_t>> normalize_axes(const OpContext& ctx,
                                            const std::vector<int64_t>& axes,
                                            int64_t rank);

// Steps through every coordinate of `dims` in row-major order:
//   for (CoordinateCounter c(dims); !c.done(); c.next()) use(c.coords());
class CoordinateCounter {
 public:
  explicit CoordinateCounter(std::vector<int64_t> dims);
  bool done() const { return done_; }
  const std::vector<int64_t>& coords() const { return coords_; }
  void next();

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> coords_;
  bool done_ = false;
};

// Pad's source index along one axis for padded position `i` of an axis of
// size `dim` (mode "constant", "reflect", "edge" or "wrap"), or -1 where the
// constant goes: the one rule the reference and the CPU kernel share.
int64_t pad_source_index(const std::string& mode, int64_t i, int64_t dim);

}  // namespace seqrt
