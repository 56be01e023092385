// The parallel split of the ops that walk one axis (ArgMax, ArgMin,
// CumSum): the input viewed as [outer, n, inner] around the axis (AxisSplit),
// each task one outer slice and a chunk of inner columns, walking the axis
// row by row so the inner loops are contiguous and vectorise.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/kernels/typed_support.h"
#include "ops/util.h"

namespace seqrt::cpu {

// Elements per parallel task, and the widest chunk of inner columns.
inline constexpr int64_t kAxisGrain = 16384;
inline constexpr int64_t kAxisColumnChunk = 1024;

// Calls fn(outer index, first column, column count) for every task.
template <typename Fn>
inline void for_each_column_chunk(const AxisSplit& s, Fn&& fn) {
  // Enough chunks that a single outer slice still splits over the threads.
  const int64_t split = (s.inner + 4 * max_threads() - 1) / (4 * max_threads());
  const int64_t chunk = std::max<int64_t>(
      1, std::min(s.inner, std::clamp<int64_t>(split, 64, kAxisColumnChunk)));
  const int64_t chunks = (s.inner + chunk - 1) / chunk;
  const int64_t per_task = std::max<int64_t>(1, chunk * s.n);
  const int64_t grain = std::max<int64_t>(1, kAxisGrain / per_task);
  parallel_chunks(s.outer * chunks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t c0 = (task % chunks) * chunk;
      fn(task / chunks, c0, std::min(chunk, s.inner - c0));
    }
  });
}

}  // namespace seqrt::cpu
