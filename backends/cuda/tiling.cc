#include "backends/cuda/tiling.h"

#include <fmt/format.h>

#include <algorithm>

namespace seqrt::cuda {
namespace {

constexpr uint32_t kFloatBytes = 4;

int next_power_of_two(int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

// The largest power of two <= cap whose bytes (fixed + per_step · length)
// fit `limit`; 0 when not even one step fits.
int longest_chunk(uint64_t fixed, uint64_t per_step, uint64_t limit, int cap) {
  int length = 0;
  for (int candidate = 1; candidate <= cap; candidate *= 2) {
    if (fixed + per_step * candidate <= limit) length = candidate;
  }
  return length;
}

}  // namespace

DeviceLimits DeviceLimits::sm80() {
  DeviceLimits limits;
  limits.sm_major = 8;
  limits.multiprocessors = 108;
  limits.shared_per_block_optin = 163 * 1024;
  return limits;
}

DeviceLimits DeviceLimits::sm90() {
  DeviceLimits limits;
  limits.sm_major = 9;
  limits.multiprocessors = 132;
  limits.shared_per_block_optin = 227 * 1024;
  return limits;
}

DeviceLimits DeviceLimits::with_shared(uint32_t bytes) {
  DeviceLimits limits = sm90();
  limits.shared_per_block = bytes;
  limits.shared_per_block_optin = bytes;
  return limits;
}

const char* state_home_name(StateHome home) {
  return home == StateHome::kRegisters ? "registers" : "shared memory";
}

std::string ScanTiling::describe() const {
  return fmt::format(
      "SelectiveScan: {} channel(s)/block x {} thread(s)/channel, {} "
      "state(s)/thread in {}, chunk {}, shared {} of {} bytes",
      channels_per_block, threads_per_channel, states_per_thread,
      state_home_name(state_home), chunk_length, shared_bytes, shared_limit);
}

Result<ScanTiling> plan_selective_scan(const DeviceLimits& limits,
                                       int64_t channels_per_group,
                                       int64_t state_size) {
  if (channels_per_group < 1 || state_size < 1) {
    return invalid_argument(
        "[SelectiveScan] cuda tiling: channels per group and N must be >= 1, "
        "got {} and {}",
        channels_per_group, state_size);
  }
  const int64_t warp = limits.warp_size;
  ScanTiling tiling;
  tiling.threads_per_channel = std::min<int64_t>(
      warp, next_power_of_two((state_size + kMaxStatesPerThread - 1) /
                              kMaxStatesPerThread));
  tiling.states_per_thread =
      static_cast<int>((state_size + tiling.threads_per_channel - 1) /
                       tiling.threads_per_channel);
  if (tiling.states_per_thread > kMaxStatesPerThread) {
    return unsupported(
        "[SelectiveScan] cuda: N = {} needs more than {} states per thread "
        "of a warp; at most {} states fit in registers",
        state_size, kMaxStatesPerThread, kMaxStatesPerThread * warp);
  }
  // About 128 threads per block: enough warps to hide latency, and many
  // blocks for the multiprocessors.
  int64_t channels = std::max<int64_t>(1, 128 / tiling.threads_per_channel);
  tiling.channels_per_block =
      static_cast<int>(std::min(channels, channels_per_group));
  // Per step: B and C (N each) and u, Δ, y of every channel of the block.
  uint64_t per_step =
      kFloatBytes * (2 * uint64_t(state_size) + 3 * tiling.channels_per_block);
  tiling.shared_limit = limits.shared_per_block;
  tiling.chunk_length = longest_chunk(0, per_step, tiling.shared_limit, 128);
  if (tiling.chunk_length == 0) {
    return unsupported(
        "[SelectiveScan] cuda: one step needs {} bytes of shared memory, the "
        "device allows {}",
        per_step, tiling.shared_limit);
  }
  tiling.shared_bytes = static_cast<uint32_t>(per_step * tiling.chunk_length);
  return tiling;
}

std::string AttentionTiling::describe() const {
  return fmt::format(
      "Attention: {} query row(s) x {} key row(s) per tile, {} warp(s), {} "
      "kv split(s), shared {} of {} bytes",
      block_q, block_k, warps, kv_splits, shared_bytes, shared_limit);
}

Result<AttentionTiling> plan_attention(const DeviceLimits& limits,
                                       int64_t head_size,
                                       int64_t value_head_size,
                                       int64_t query_length, int64_t key_length,
                                       int64_t batch_heads) {
  if (head_size < 1 || value_head_size < 1 || batch_heads < 1) {
    return invalid_argument(
        "[Attention] cuda tiling: d, dv and B*H must be >= 1, got {}, {}, {}",
        head_size, value_head_size, batch_heads);
  }
  // A lane owns dv/32 output columns in registers.
  if (value_head_size > 8 * int64_t(limits.warp_size)) {
    return unsupported("[Attention] cuda: dv = {} exceeds {}", value_head_size,
                       8 * limits.warp_size);
  }
  AttentionTiling tiling;
  tiling.warps = 4;
  // Larger key tiles mean fewer barriers; use the opt-in shared memory of
  // sm_80/sm_90 when the default 48 KiB cannot hold a 64-row tile. Where
  // shared memory is tight, fewer query rows per block leave room for keys.
  uint64_t per_key = uint64_t(kFloatBytes) * (head_size + value_head_size);
  tiling.shared_limit = limits.shared_per_block_optin;
  int block_k = 0;
  for (int block_q : {query_length <= 4 ? 4 : 16, 4}) {
    tiling.block_q = block_q;
    uint64_t q_bytes = uint64_t(kFloatBytes) * block_q * head_size;
    block_k = longest_chunk(q_bytes, per_key, tiling.shared_limit, 64);
    tiling.shared_bytes = static_cast<uint32_t>(q_bytes + per_key * block_k);
    if (block_k >= 16) break;
  }
  if (block_k < 8) {
    return unsupported(
        "[Attention] cuda: an 8-row key tile of d = {}, dv = {} does not fit "
        "{} bytes of shared memory",
        head_size, value_head_size, tiling.shared_limit);
  }
  tiling.block_k = block_k;
  // Split-KV when the query blocks alone would leave most SMs idle.
  int64_t blocks =
      batch_heads * ((query_length + tiling.block_q - 1) / tiling.block_q);
  int64_t key_tiles = (key_length + block_k - 1) / block_k;
  if (blocks < limits.multiprocessors && key_tiles > 1) {
    int64_t splits = (2 * limits.multiprocessors + blocks - 1) / blocks;
    tiling.kv_splits = static_cast<int>(std::min<int64_t>(splits, key_tiles));
  }
  return tiling;
}

std::string ChunkedStateTiling::describe() const {
  return fmt::format(
      "chunkwise: {} column(s)/block in {}, chunk {}, shared {} of {} bytes",
      cols_per_block, state_home_name(state_home), chunk_length, shared_bytes,
      shared_limit);
}

uint64_t chunked_state_shared_bytes(int64_t rows, int64_t queries,
                                    int64_t cols_per_block, int chunk) {
  // The state slice; per step the key, each query, the values and the
  // cumulative decay; the chunk × chunk decay-weighted scores.
  const uint64_t per_step =
      (1 + uint64_t(queries)) * rows + uint64_t(cols_per_block) + 1;
  return kFloatBytes * (uint64_t(rows) * cols_per_block + per_step * chunk +
                        uint64_t(chunk) * chunk);
}

Result<ChunkedStateTiling> plan_chunked_state(const DeviceLimits& limits,
                                              int64_t rows, int64_t cols,
                                              int64_t queries,
                                              int64_t requested_chunk) {
  if (rows < 1 || cols < 1 || queries < 1) {
    return invalid_argument(
        "cuda tiling: the state must be at least 1x1 with a query, got {}x{} "
        "and {}",
        rows, cols, queries);
  }
  ChunkedStateTiling tiling;
  const int cap =
      requested_chunk > 0
          ? static_cast<int>(std::min<int64_t>(requested_chunk, 128))
          : 64;
  // Prefer chunks of at least 16 steps, then the default shared memory
  // (no opt-in), then the whole state per block; give up in reverse.
  for (int min_chunk : {std::min(cap, 16), 1}) {
    for (uint32_t limit :
         {limits.shared_per_block, limits.shared_per_block_optin}) {
      for (int64_t slice = cols; slice >= 1;
           slice = slice == 1 ? 0 : (slice + 1) / 2) {
        int chunk = 0;
        for (int candidate = 1; candidate <= cap; candidate *= 2) {
          if (chunked_state_shared_bytes(rows, queries, slice, candidate) <=
              limit) {
            chunk = candidate;
          }
        }
        if (chunk >= min_chunk) {
          tiling.cols_per_block = slice;
          tiling.chunk_length = chunk;
          tiling.shared_limit = limit;
          tiling.shared_bytes = static_cast<uint32_t>(
              chunked_state_shared_bytes(rows, queries, slice, chunk));
          return tiling;
        }
      }
    }
  }
  return unsupported(
      "cuda: a state of {} row(s) does not fit {} bytes of shared memory "
      "even one column per block",
      rows, limits.shared_per_block_optin);
}

std::string ColumnScanTiling::describe() const {
  return fmt::format(
      "column scan: {} column(s)/block x {} thread(s)/column, {} row(s)/thread "
      "in {}, chunk {}, shared {} of {} bytes",
      cols_per_block, threads_per_column, rows_per_thread,
      state_home_name(state_home), chunk_length, shared_bytes, shared_limit);
}

uint64_t column_scan_shared_bytes(int64_t rows, int64_t queries,
                                  int cols_per_block, int threads, int chunk,
                                  int rows_per_thread, StateHome home) {
  // Per step: the key, the per-row decay and each query (rows each), the
  // block's values and two scalars (decay factor, beta or Δ).
  uint64_t per_step = (2 + uint64_t(queries)) * rows + cols_per_block + 2;
  uint64_t state = home == StateHome::kSharedMemory
                       ? uint64_t(rows_per_thread) * threads
                       : 0;
  return kFloatBytes * (state + per_step * chunk);
}

Result<ColumnScanTiling> plan_column_scan(const DeviceLimits& limits,
                                          int64_t rows, int64_t cols,
                                          int64_t queries,
                                          int64_t requested_chunk) {
  if (rows < 1 || cols < 1 || queries < 1) {
    return invalid_argument(
        "cuda tiling: a column scan needs rows, columns and queries >= 1, got "
        "{}, {}, {}",
        rows, cols, queries);
  }
  ColumnScanTiling tiling;
  const int64_t warp = limits.warp_size;
  tiling.threads_per_column = static_cast<int>(std::min<int64_t>(
      warp,
      next_power_of_two((rows + kMaxRowsPerThread - 1) / kMaxRowsPerThread)));
  tiling.rows_per_thread = static_cast<int>(
      (rows + tiling.threads_per_column - 1) / tiling.threads_per_column);
  tiling.state_home = tiling.rows_per_thread <= kMaxRowsPerThread
                          ? StateHome::kRegisters
                          : StateHome::kSharedMemory;
  const int cap =
      requested_chunk > 0
          ? static_cast<int>(std::min<int64_t>(requested_chunk, 256))
          : 64;
  // About 256 threads per block. Prefer the default shared memory (no
  // opt-in, more blocks per SM) and chunks of at least 8 steps; give up
  // columns per block, then the default limit, then chunk length.
  const int wide = static_cast<int>(
      std::min<int64_t>(cols, std::max(1, 256 / tiling.threads_per_column)));
  for (int min_chunk : {std::min(cap, 8), 1}) {
    for (uint32_t limit :
         {limits.shared_per_block, limits.shared_per_block_optin}) {
      for (int slice = wide; slice >= 1;
           slice = slice == 1 ? 0 : (slice + 1) / 2) {
        tiling.cols_per_block = slice;
        tiling.shared_limit = limit;
        const int threads = tiling.threads();
        auto bytes = [&](int chunk) {
          return column_scan_shared_bytes(rows, queries, slice, threads, chunk,
                                          tiling.rows_per_thread,
                                          tiling.state_home);
        };
        uint64_t fixed = bytes(0);
        int chunk = longest_chunk(fixed, bytes(1) - fixed, limit, cap);
        if (chunk >= min_chunk) {
          tiling.chunk_length = chunk;
          tiling.shared_bytes = static_cast<uint32_t>(bytes(chunk));
          return tiling;
        }
      }
    }
  }
  return unsupported(
      "cuda: a column scan of {} row(s) and {} query vector(s) does not fit "
      "{} bytes of shared memory even one column per block",
      rows, queries, limits.shared_per_block_optin);
}

std::string NeuralMemoryTiling::describe() const {
  return fmt::format(
      "NeuralMemory: {} thread(s)/block, weights{} in shared memory, "
      "momentum in {}{}, shared {} of {} bytes",
      threads, anchor_stored ? " and anchor" : "",
      state_home_name(momentum_home),
      momentum_home == StateHome::kRegisters
          ? fmt::format(" ({}/thread)", momentum_per_thread)
          : std::string(),
      shared_bytes, shared_limit);
}

uint64_t neural_memory_shared_bytes(int64_t d, int64_t m, int depth,
                                    bool anchor_stored, StateHome momentum) {
  const uint64_t params = uint64_t(neural_memory_params(d, m, depth));
  const uint64_t width = uint64_t(depth == 2 ? m : d);
  uint64_t floats = params;
  if (anchor_stored) floats += params;
  if (momentum == StateHome::kSharedMemory) floats += params;
  // k, v, q, r (d each); h's activation, its derivative and the query's
  // hidden vector (width each); theta, eta, alpha and one spare.
  floats += 4 * uint64_t(d) + 3 * width + 4;
  return kFloatBytes * floats;
}

Result<NeuralMemoryTiling> plan_neural_memory(const DeviceLimits& limits,
                                              int64_t d, int64_t m, int depth,
                                              int64_t chunk) {
  if (d < 1 || m < 1 || (depth != 1 && depth != 2) || chunk < 1) {
    return invalid_argument(
        "[NeuralMemory] cuda tiling: d, m, chunk must be >= 1 and depth 1 or "
        "2, got d {}, m {}, depth {}, chunk {}",
        d, m, depth, chunk);
  }
  const int64_t params = neural_memory_params(d, m, depth);
  NeuralMemoryTiling tiling;
  tiling.anchor_stored = chunk > 1;
  // The momentum in registers needs P / threads <= kMaxMomentumPerThread
  // with at most max_threads_per_block threads; at least 128 threads (and
  // whole warps) keep the matrix-vector products parallel.
  const int64_t max_threads = limits.max_threads_per_block;
  const int64_t wanted =
      (params + kMaxMomentumPerThread - 1) / kMaxMomentumPerThread;
  const int64_t threads =
      std::max<int64_t>(128, (wanted + limits.warp_size - 1) /
                                 limits.warp_size * limits.warp_size);
  // Prefer registers, then the default shared memory (no opt-in).
  for (StateHome home : {StateHome::kRegisters, StateHome::kSharedMemory}) {
    if (home == StateHome::kRegisters && threads > max_threads) continue;
    const uint64_t bytes =
        neural_memory_shared_bytes(d, m, depth, tiling.anchor_stored, home);
    for (uint32_t limit :
         {limits.shared_per_block, limits.shared_per_block_optin}) {
      if (bytes > limit) continue;
      tiling.momentum_home = home;
      if (home == StateHome::kRegisters) {
        tiling.threads = static_cast<int>(threads);
        tiling.momentum_per_thread =
            static_cast<int>((params + threads - 1) / threads);
      } else {
        tiling.threads = static_cast<int>(std::min<int64_t>(max_threads, 512));
        tiling.momentum_per_thread = 0;
      }
      tiling.shared_bytes = static_cast<uint32_t>(bytes);
      tiling.shared_limit = limit;
      return tiling;
    }
  }
  return unsupported(
      "[NeuralMemory] cuda: the weights{} of one head (d {}, m {}, depth {}: "
      "{} floats each) need {} bytes of shared memory with the momentum in "
      "registers, which needs {} threads of at most {}; the device allows "
      "{} bytes per block",
      tiling.anchor_stored ? " and anchor" : "", d, m, depth, params,
      neural_memory_shared_bytes(d, m, depth, tiling.anchor_stored,
                                 StateHome::kRegisters),
      threads, max_threads, limits.shared_per_block_optin);
}

}  // namespace seqrt::cuda
