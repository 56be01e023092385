// The kernel-level planner of the CUDA backend (DESIGN.md §5.2): from a
// device's limits, how each sequence op is tiled, how long its chunks are
// and where its running state lives. Pure host code (no CUDA calls), so it
// is tested on machines without a GPU; the kernels take its choices as
// launch parameters, and results never depend on them.
#pragma once

#include <cstdint>
#include <string>

#include "graph/status.h"

namespace seqrt::cuda {

struct DeviceLimits {
  int sm_major = 8;
  int sm_minor = 0;
  int multiprocessors = 108;
  uint32_t shared_per_block = 48 * 1024;        // without opting in
  uint32_t shared_per_block_optin = 48 * 1024;  // cudaFuncSetAttribute max
  uint32_t registers_per_block = 65536;
  uint32_t max_threads_per_block = 1024;
  uint32_t warp_size = 32;

  static DeviceLimits sm80();  // A100: 163 KiB opt-in, 108 SMs
  static DeviceLimits sm90();  // H100: 227 KiB opt-in, 132 SMs
  // sm_90 with every shared-memory limit set to `bytes` (for tests and for
  // a caller that wants to leave room to other work).
  static DeviceLimits with_shared(uint32_t bytes);
};

enum class StateHome { kRegisters, kSharedMemory };
const char* state_home_name(StateHome home);

// SelectiveScan: a block owns `channels_per_block` channels of one group;
// each channel's N states are spread over `threads_per_channel` threads
// (a power of two dividing the warp) holding `states_per_thread` each in
// registers. B and C of one chunk of `chunk_length` steps go through shared
// memory once per block, with u, Δ and y of the block's channels.
struct ScanTiling {
  int threads_per_channel = 1;
  int states_per_thread = 1;
  int channels_per_block = 1;
  int chunk_length = 1;
  StateHome state_home = StateHome::kRegisters;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;  // the limit the choice respects
  int threads() const { return threads_per_channel * channels_per_block; }
  std::string describe() const;
};
inline constexpr int kMaxStatesPerThread = 16;
Result<ScanTiling> plan_selective_scan(const DeviceLimits& limits,
                                       int64_t channels_per_group,
                                       int64_t state_size);

// Attention (fp32 path): a block holds `block_q` query rows and streams
// keys/values in tiles of `block_k` rows through shared memory with an
// online softmax; `kv_splits` > 1 splits the keys of a decode step over
// several blocks (split-KV) whose partial results are combined after.
struct AttentionTiling {
  int block_q = 16;
  int block_k = 32;
  int warps = 4;
  int kv_splits = 1;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;
  std::string describe() const;
};
Result<AttentionTiling> plan_attention(const DeviceLimits& limits,
                                       int64_t head_size,
                                       int64_t value_head_size,
                                       int64_t query_length, int64_t key_length,
                                       int64_t batch_heads);

// The chunkwise form of Retention and LinearAttention (linear, gated per
// head): a block owns a `rows × cols_per_block` slice of the (rows, cols)
// fp32 state in shared memory for the whole pass; per chunk of
// `chunk_length` steps it stages the keys, each query vector (rows per
// step), the values of its columns, the chunk's decay matrix (chunk²) and
// cumulative decays, computes the chunk's outputs in parallel and moves
// the state across the chunk at once.
struct ChunkedStateTiling {
  int64_t cols_per_block = 0;
  int chunk_length = 1;
  StateHome state_home = StateHome::kSharedMemory;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;
  static constexpr int kThreads = 256;
  std::string describe() const;
};
uint64_t chunked_state_shared_bytes(int64_t rows, int64_t queries,
                                    int64_t cols_per_block, int chunk);
// `requested_chunk` is the op's hint (0: none); the plan may shorten it to
// fit, which never changes results.
Result<ChunkedStateTiling> plan_chunked_state(const DeviceLimits& limits,
                                              int64_t rows, int64_t cols,
                                              int64_t queries,
                                              int64_t requested_chunk);
// Sequences this long or longer run chunkwise; shorter ones (decode steps)
// run the recurrence (ColumnScanTiling), which has no chunk overhead.
inline constexpr int64_t kChunkwiseMinSteps = 16;
inline bool prefer_chunkwise(int64_t steps) {
  return steps >= kChunkwiseMinSteps;
}

// Recurrences whose matrix state splits into independent columns
// (Retention, LinearAttention with every update rule, SSD): column j of a
// (rows × cols) state is updated from step t's key (rows), value (one per
// column) and decay, and read by `queries` query vectors, with reductions
// over rows only. A block owns `cols_per_block` columns; each column's rows
// are spread over `threads_per_column` lanes (a power of two dividing the
// warp) holding `rows_per_thread` each — in registers when at most
// kMaxRowsPerThread, else in shared memory. Keys, queries, per-row decays
// and the block's values of `chunk_length` steps are staged in shared
// memory at once, so the state never leaves the chip during the pass.
struct ColumnScanTiling {
  int threads_per_column = 1;
  int rows_per_thread = 1;
  int cols_per_block = 1;
  int chunk_length = 1;
  StateHome state_home = StateHome::kRegisters;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;
  // Whole warps: lanes past the last column take part in the shuffles.
  int threads() const {
    return (threads_per_column * cols_per_block + 31) / 32 * 32;
  }
  std::string describe() const;
};
inline constexpr int kMaxRowsPerThread = 16;
// Shared memory bytes of a chunk of `chunk` steps (staging plus the state
// when it lives in shared memory); the kernel lays it out the same way.
uint64_t column_scan_shared_bytes(int64_t rows, int64_t queries,
                                  int cols_per_block, int threads, int chunk,
                                  int rows_per_thread, StateHome home);
Result<ColumnScanTiling> plan_column_scan(const DeviceLimits& limits,
                                          int64_t rows, int64_t cols,
                                          int64_t queries,
                                          int64_t requested_chunk);

// seqrt::NeuralMemory: one block per (batch, head) runs the token loop with
// the memory MLP's weights in shared memory for the whole pass (every
// thread reads all of them in the matrix-vector products); the anchor
// weights beside them when chunks are longer than one token (with chunk 1
// the anchor is the current weights); the momentum S, touched only
// elementwise, in registers (`momentum_per_thread` per thread) when that
// fits, else in shared memory too. The token's k, v, q and the MLP's
// hidden vectors are staged in shared memory as well.
struct NeuralMemoryTiling {
  int threads = 256;
  int momentum_per_thread = 0;  // 0 when the momentum is in shared memory
  StateHome momentum_home = StateHome::kRegisters;
  bool anchor_stored = false;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;
  std::string describe() const;
};
inline constexpr int kMaxMomentumPerThread = 8;
// Weights per head: d·m for depth 1 (m = d), d·m + m·d for depth 2.
inline int64_t neural_memory_params(int64_t d, int64_t m, int depth) {
  return depth == 2 ? 2 * d * m : d * m;
}
// Shared memory bytes for these sizes and placements; the kernel lays it
// out the same way.
uint64_t neural_memory_shared_bytes(int64_t d, int64_t m, int depth,
                                    bool anchor_stored, StateHome momentum);
Result<NeuralMemoryTiling> plan_neural_memory(const DeviceLimits& limits,
                                              int64_t d, int64_t m, int depth,
                                              int64_t chunk);

}  // namespace seqrt::cuda
