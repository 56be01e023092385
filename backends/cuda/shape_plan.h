// Index plans of the shape ops' kernels (host code, tested without a GPU
// in shape_plan_test.cc against the reference kernels): Tile as a strided
// copy (copy_plan.h), Pad's per-axis source map for every mode, and
// GatherElements' data offsets. The inline index functions are compiled
// for the host and the device, so the tests check what the GPU runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "graph/status.h"

namespace seqrt::cuda {

// Tile: output axis a (repeats[a]·in_dims[a]) seen as (repeats[a],
// in_dims[a]), the repeat axis read with stride 0.
Result<StridedCopy> tile_copy(const std::vector<int64_t>& in_dims,
                              const std::vector<int64_t>& repeats);

enum class PadMode : int { kConstant, kReflect, kEdge, kWrap };
Result<PadMode> pad_mode(const std::string& name);

// Pad (or crop, with negative pads) of a tensor of rank <= kMaxCopyRank.
struct PadIndex {
  int rank = 0;
  PadMode mode = PadMode::kConstant;
  int64_t in_dims[kMaxCopyRank] = {};
  int64_t out_dims[kMaxCopyRank] = {};
  int64_t begin[kMaxCopyRank] = {};  // pad before axis a (< 0 crops)
  int64_t in_strides[kMaxCopyRank] = {};
};

// The input element output element i reads, or -1 for the constant. Axes
// the modes read from are never empty (the op's checks refuse it).
SEQRT_HOST_DEVICE inline int64_t pad_source(const PadIndex& p, int64_t i) {
  int64_t src = 0;
  bool constant = false;
  for (int a = p.rank - 1; a >= 0; --a) {
    int64_t x = i % p.out_dims[a] - p.begin[a];
    i /= p.out_dims[a];
    const int64_t n = p.in_dims[a];
    if (x < 0 || x >= n) {
      switch (p.mode) {
        case PadMode::kConstant:
          constant = true;
          x = 0;
          break;
        case PadMode::kEdge:
          x = x < 0 ? 0 : n - 1;
          break;
        case PadMode::kWrap:
          x = ((x % n) + n) % n;
          break;
        case PadMode::kReflect:
          if (n == 1) {
            x = 0;
          } else {
            // Mirror without repeating the edge: period 2(n − 1).
            const int64_t period = 2 * (n - 1);
            x = ((x % period) + period) % period;
            if (x >= n) x = period - x;
          }
          break;
      }
    }
    src += x * p.in_strides[a];
  }
  return constant ? -1 : src;
}

// `begin` per axis of `in_dims` (every axis; from the op's pads and axes),
// `out_dims` as the op's shape inference gives them.
Result<PadIndex> pad_index(const std::vector<int64_t>& in_dims,
                           const std::vector<int64_t>& out_dims,
                           const std::vector<int64_t>& begin, PadMode mode);

// GatherElements along `axis`: output element i (over the indices' dims)
// reads data at its own coordinates with the axis one replaced by
// indices[i] (made non-negative and checked on the host).
struct GatherElementsIndex {
  int rank = 0;
  int axis = 0;
  int64_t out_dims[kMaxCopyRank] = {};
  int64_t data_strides[kMaxCopyRank] = {};
};

SEQRT_HOST_DEVICE inline int64_t gather_elements_source(
    const GatherElementsIndex& g, const int64_t* indices, int64_t i) {
  int64_t src = 0;
  const int64_t index = indices[i];
  for (int a = g.rank - 1; a >= 0; --a) {
    const int64_t c = i % g.out_dims[a];
    i /= g.out_dims[a];
    src += (a == g.axis ? index : c) * g.data_strides[a];
  }
  return src;
}

// Checks the indices against [-n, n) of data's axis and makes them
// non-negative, naming the first bad one.
Result<GatherElementsIndex> gather_elements_index(
    const std::vector<int64_t>& data_dims,
    const std::vector<int64_t>& index_dims, int64_t axis,
    std::vector<int64_t>& indices);

}  // namespace seqrt::cuda
