// The parallel split of the indexing and padding kernels (GatherElements,
// Pad, Tile, Trilu): the output's rows (all dims but the last) spread over
// the threads, each row copying its contiguous parts with memcpy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace seqrt::cpu {

// Elements per parallel task.
inline constexpr int64_t kRowGrain = 16384;

// Rows of `dims` (every dim but the last) per parallel task.
inline int64_t row_grain(const std::vector<int64_t>& dims) {
  int64_t length = dims.empty() ? 1 : std::max<int64_t>(dims.back(), 1);
  return std::max<int64_t>(1, kRowGrain / length);
}

inline int64_t num_rows(const std::vector<int64_t>& dims) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  return dims.empty() || dims.back() == 0 ? 0 : rows;
}

// The coordinates of row `row` (all dims but the last).
inline void row_coords(const std::vector<int64_t>& dims, int64_t row,
                       std::vector<int64_t>& coords) {
  for (size_t d = dims.size() - 1; d-- > 0;) {
    coords[d] = row % dims[d];
    row /= dims[d];
  }
}

}  // namespace seqrt::cpu
