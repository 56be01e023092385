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

// Chunked sequence ops with a matrix state (Retention, LinearAttention,
// SSD, NeuralMemory): a block owns a `rows × cols_per_block` slice of the
// (rows, cols) fp32 state; the slice stays in shared memory (or registers
// when it is small enough) for the whole pass, and chunks of
// `chunk_length` steps of keys/values are staged beside it.
struct ChunkedStateTiling {
  int64_t cols_per_block = 0;
  int chunk_length = 1;
  StateHome state_home = StateHome::kSharedMemory;
  uint32_t shared_bytes = 0;
  uint32_t shared_limit = 0;
  std::string describe() const;
};
// `requested_chunk` is the op's hint (0: none); the plan may shorten it to
// fit, which never changes results.
Result<ChunkedStateTiling> plan_chunked_state(const DeviceLimits& limits,
                                              int64_t rows, int64_t cols,
                                              int64_t requested_chunk);

}  // namespace seqrt::cuda
