// Index plans of the data-movement and reduction kernels (host code, tested
// without a GPU): Transpose, Expand, Slice, and each input of Concat / each
// output of Split become a StridedCopy that kernels/copy.cu runs for any
// element size; Where's three-way broadcast; Gather's shape and checked
// indices; a reduction's kept and reduced axes. Element (c_0..c_r) of a
// copy moves src[src_offset + Σ c_a·src_strides[a]] to
// dst[dst_offset + Σ c_a·dst_strides[a]], strides in elements. The inline
// offset functions are the kernels' own index arithmetic, compiled for the
// host too so the tests check exactly what the device runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/status.h"

#ifdef __CUDACC__
#define SEQRT_HOST_DEVICE __host__ __device__
#else
#define SEQRT_HOST_DEVICE
#endif

namespace seqrt::cuda {

inline constexpr int kMaxCopyRank = 8;

struct StridedCopy {
  int rank = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t src_strides[kMaxCopyRank] = {};  // 0: broadcast; < 0: reversed
  int64_t dst_strides[kMaxCopyRank] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  int64_t elements() const;
};

// Source and destination element of the copy's i-th element (row-major).
SEQRT_HOST_DEVICE inline void copy_offsets(const StridedCopy& copy, int64_t i,
                                           int64_t* src, int64_t* dst) {
  int64_t s = copy.src_offset;
  int64_t d = copy.dst_offset;
  for (int a = copy.rank - 1; a >= 0; --a) {
    const int64_t c = i % copy.dims[a];
    i /= copy.dims[a];
    s += c * copy.src_strides[a];
    d += c * copy.dst_strides[a];
  }
  *src = s;
  *dst = d;
}

// Row-major strides of `dims`.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

// Drops size-1 axes and merges neighbours contiguous in both source and
// destination; fails (kUnsupported) past kMaxCopyRank after that.
Result<StridedCopy> make_copy(const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& src_strides,
                              const std::vector<int64_t>& dst_strides,
                              int64_t src_offset, int64_t dst_offset);

// out[c] = in[c permuted]: out dim a is in dim perm[a].
Result<StridedCopy> transpose_copy(const std::vector<int64_t>& in_dims,
                                   const std::vector<int64_t>& perm);

// `in_dims` broadcast (right-aligned, ONNX rules) to `out_dims`.
Result<StridedCopy> broadcast_copy(const std::vector<int64_t>& in_dims,
                                   const std::vector<int64_t>& out_dims);

// ONNX Slice with starts/ends/steps already given for every axis (axes not
// sliced: 0, INT64_MAX, 1). `out_dims` receives the output's dims.
Result<StridedCopy> slice_copy(const std::vector<int64_t>& in_dims,
                               const std::vector<int64_t>& starts,
                               const std::vector<int64_t>& ends,
                               const std::vector<int64_t>& steps,
                               std::vector<int64_t>& out_dims);

// A contiguous block `part_dims` placed at `offset` along `axis` of a
// contiguous `whole_dims`: into the whole (Concat) or out of it (Split).
Result<StridedCopy> place_part_copy(const std::vector<int64_t>& part_dims,
                                    const std::vector<int64_t>& whole_dims,
                                    size_t axis, int64_t offset,
                                    bool into_whole);

// Where(cond, X, Y): the three operands' strides over the output's dims
// (0 along broadcast axes), at most kMaxCopyRank axes.
struct SelectIndex {
  int rank = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t strides[3][kMaxCopyRank] = {};
};
// Elements of cond, X and Y read by output element i.
SEQRT_HOST_DEVICE inline void select_offsets(const SelectIndex& index,
                                             int64_t i, int64_t at[3]) {
  at[0] = at[1] = at[2] = 0;
  for (int a = index.rank - 1; a >= 0; --a) {
    const int64_t c = i % index.dims[a];
    i /= index.dims[a];
    for (int k = 0; k < 3; ++k) at[k] += c * index.strides[k][a];
  }
}
Result<SelectIndex> select_index(const std::vector<int64_t>& cond_dims,
                                 const std::vector<int64_t>& x_dims,
                                 const std::vector<int64_t>& y_dims,
                                 std::vector<int64_t>& out_dims);

// Gather along `axis`: data seen as (outer, axis_length, inner), output
// (outer, indices, inner). Indices are checked against [-n, n) and made
// non-negative here, on the host, before any upload.
struct GatherShape {
  int64_t outer = 1, axis_length = 0, inner = 1, indices = 0;
};
// The data element read by output element i.
SEQRT_HOST_DEVICE inline int64_t gather_source(const GatherShape& shape,
                                               const int64_t* indices,
                                               int64_t i) {
  const int64_t inner = i % shape.inner;
  const int64_t j = (i / shape.inner) % shape.indices;
  const int64_t outer = i / (shape.inner * shape.indices);
  return (outer * shape.axis_length + indices[j]) * shape.inner + inner;
}
Result<GatherShape> gather_shape(const std::vector<int64_t>& data_dims,
                                 int64_t axis, std::vector<int64_t>& indices);

// A reduction: output element o reads the input at axes_offset(kept, o) +
// axes_offset(reduced, r) for r < count.
struct AxesIndex {
  int rank = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t strides[kMaxCopyRank] = {};
};
SEQRT_HOST_DEVICE inline int64_t axes_offset(const AxesIndex& index,
                                             int64_t linear) {
  int64_t offset = 0;
  for (int a = index.rank - 1; a >= 0; --a) {
    offset += (linear % index.dims[a]) * index.strides[a];
    linear /= index.dims[a];
  }
  return offset;
}
struct ReduceIndex {
  AxesIndex kept, reduced;
  int64_t outputs = 1;
  int64_t count = 1;
};
// `reduced[a]` says whether input axis a is reduced.
Result<ReduceIndex> reduce_index(const std::vector<int64_t>& dims,
                                 const std::vector<bool>& reduced);

// Whether a LayerNorm/RMSNorm Scale or B of `param_dims`, broadcast to x,
// is one block of cols = Π x_dims[axis:] values shared by every row: it
// has cols elements and its dims aligned before `axis` are all 1.
bool affine_shared_by_rows(const std::vector<int64_t>& param_dims,
                           const std::vector<int64_t>& x_dims, size_t axis);

// The copy on the host, byte for byte (the tests' check of every plan).
void run_copy_on_host(const void* src, void* dst, size_t element_size,
                      const StridedCopy& copy);

}  // namespace seqrt::cuda
