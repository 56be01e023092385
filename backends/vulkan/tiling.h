// The kernel-level planner for the sequence ops (DESIGN.md §5.2): from the
// device's limits and a node's sizes it chooses the slice each workgroup
// owns, the token tile or chunk length, and where the running state lives
// (registers when it fits the per-invocation budget, else shared memory).
// Pure host code: it needs no device, so its tests run everywhere.
#pragma once

#include <cstdint>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// Floats of running state one invocation may keep in registers. Past this
// the compiler spills to device-local scratch on most GPUs, which would
// break the rule that state stays on chip, so the planner moves the state
// to shared memory instead.
constexpr uint32_t kRegisterStateFloats = 16;
// Invocations the planner aims at per workgroup (it uses fewer when the
// device allows fewer or the slice is smaller).
constexpr uint32_t kTargetInvocations = 128;

// llvmpipe (lavapipe) silently ends every loop of a shader invocation once
// all its loops together have run 65535 iterations (gallivm's loop
// limiter): a token loop past that leaves the rest of the outputs
// unwritten and the state short. The planners keep one dispatch's loop
// iterations under this budget: token-loop kernels cut long sequences into
// segments (one dispatch each, the state carried through memory between
// them), attention cuts long key ranges into split-K runs.
constexpr uint64_t kMaxLoopIterations = 60000;
// Tokens per dispatch, a multiple of `tile`: `per_tile` loop iterations per
// tile of tokens and `fixed` outside the token loop stay within the budget.
uint32_t segment_tokens(uint64_t per_tile, uint32_t tile, uint64_t fixed);

// SelectiveScan: workgroups own `channels` channels (of one group) of one
// batch row; each channel's N states are split over `splits` invocations.
struct ScanTiling {
  uint32_t invocations = 0;  // workgroup size = channels * splits
  uint32_t channels = 0;     // channels per workgroup
  uint32_t splits = 0;       // invocations per channel
  uint32_t states_per_invocation = 0;
  uint32_t tile = 0;          // tokens per B/C tile in shared memory
  bool state_shared = false;  // running state in shared memory
  bool subgroup = false;      // reduce over splits with shuffles
  uint32_t segment = 0;       // tokens per dispatch (segment_tokens)
};
// The shader's specialisation constants 0..6 of a scan-shaped tiling.
std::vector<uint32_t> scan_constants(const ScanTiling& t);
struct ScanSizes {
  int64_t channels_per_group = 0;  // D / G
  int64_t states = 0;              // N
  int64_t length = 0;              // L
};
// Shared memory the scan shader declares for `t` (its arrays, exactly).
uint32_t scan_shared_bytes(const ScanTiling& t);
Result<KernelTiling> plan_selective_scan(const ScanSizes& sizes,
                                         const DeviceLimits& limits);
// Recurrent Retention has the scan's shape: value columns for channels,
// the dk key rows of the state for states, one decay per head.
Result<KernelTiling> plan_retention(int64_t dk, int64_t dv, int64_t length,
                                    const DeviceLimits& limits);
// Recurrent SSD (Mamba-2) has the scan's shape too: the P columns of a
// head's state for channels, its N states for states (the byte count is an
// upper bound: the shader has no A copy).
Result<KernelTiling> plan_ssd(int64_t head_dim, int64_t states, int64_t length,
                              const DeviceLimits& limits);
// Chunked Retention and SSD (three passes: per-chunk state contributions
// in parallel, a scan over chunks storing each chunk's start state once,
// then every chunk's outputs in parallel from a C x C score matrix in
// shared memory). The planners take them from kChunkedMinLength tokens on.
constexpr int64_t kChunkedMinLength = 256;
struct ChunkTiling {
  uint32_t invocations = 0;  // of the output pass
  uint32_t chunk = 0;        // C: a power of two, at most chunk_size and 64
};
uint32_t retention_chunk_shared_bytes(const ChunkTiling& t);
uint32_t ssd_chunk_shared_bytes(const ChunkTiling& t);
// Recurrent below kChunkedMinLength tokens (or when the chunk states of all
// `batch_heads` would pass one binding's range), else chunked with the
// longest chunk up to `chunk_hint` (and 64) whose output pass fits the
// shared-memory limit and the loop budget.
Result<KernelTiling> plan_retention_form(int64_t dk, int64_t dv, int64_t length,
                                         int64_t batch_heads,
                                         int64_t chunk_hint,
                                         const DeviceLimits& limits);
Result<KernelTiling> plan_ssd_form(int64_t head_dim, int64_t states,
                                   int64_t length, int64_t batch_heads,
                                   int64_t chunk_hint,
                                   const DeviceLimits& limits);
bool is_chunkwise_retention(const KernelTiling& tiling);
bool is_chunked_ssd(const KernelTiling& tiling);
// Both chunked forms' tiling back from KernelTiling::constants.
Result<ChunkTiling> retention_chunk_tiling_from(const KernelTiling& tiling);
// The tiling back from KernelTiling::constants (written by the planner).
Result<ScanTiling> scan_tiling_from(const KernelTiling& tiling);

// CausalConvWithState: workgroups own `tile` tokens of one channel row and
// stage them with the k-1 tokens before them in shared memory.
struct ConvTiling {
  uint32_t invocations = 0;
  uint32_t tile = 0;  // tokens per workgroup
  uint32_t kernel = 0;
};
uint32_t conv_shared_bytes(const ConvTiling& t);
Result<KernelTiling> plan_causal_conv(int64_t kernel_size, int64_t length,
                                      const DeviceLimits& limits);
Result<ConvTiling> conv_tiling_from(const KernelTiling& tiling);

// Attention (flash form): a workgroup owns `rows` query rows of one (batch,
// kv head) (every query head of the kv head's group, GQA); each row's d
// query values and dv accumulators are split over `splits` invocations, in
// registers. Keys go through shared memory in tiles of `tile`, with their
// values. `key_splits` > 1: split-K, the keys cut into runs of
// `keys_per_split`, each run a workgroup, combined by a reduce pass.
struct AttentionTiling {
  uint32_t invocations = 0;  // rows * splits
  uint32_t rows = 0;
  uint32_t splits = 0;  // invocations per row
  uint32_t query_per_invocation = 0;
  uint32_t values_per_invocation = 0;
  uint32_t tile = 0;  // keys per K/V tile
  bool subgroup = false;
  uint32_t key_splits = 1;
  uint32_t keys_per_split = 0;
};
struct AttentionSizes {
  int64_t head_dim = 0;   // d
  int64_t value_dim = 0;  // dv
  int64_t rows = 0;       // query rows per kv head: (Hq / Hkv) * Tq
  int64_t query_len = 0;  // Tq
  int64_t total_len = 0;  // Ttot, keys per row
  int64_t groups = 1;     // (batch, kv head) pairs: B * Hkv
};
// Shared memory the attention shader declares for `t` (exactly).
uint32_t attention_shared_bytes(const AttentionTiling& t);
Result<KernelTiling> plan_attention(const AttentionSizes& sizes,
                                    const DeviceLimits& limits);
Result<AttentionTiling> attention_tiling_from(const KernelTiling& tiling);

// LinearAttention (recurrent): a workgroup owns `columns` value columns of
// one (batch, kv head); each column's dk state rows are split over `splits`
// invocations like the scan's states; k, the group's q rows and the decays
// are staged per token tile of `tile`.
struct LinearAttentionTiling {
  uint32_t invocations = 0;  // columns * splits
  uint32_t columns = 0;
  uint32_t splits = 0;
  uint32_t rows_per_invocation = 0;
  uint32_t tile = 0;
  bool state_shared = false;
  bool subgroup = false;
  uint32_t group = 1;    // query heads per kv head
  uint32_t segment = 0;  // tokens per dispatch (segment_tokens)
};
uint32_t linear_attention_shared_bytes(const LinearAttentionTiling& t);
Result<KernelTiling> plan_linear_attention(int64_t dk, int64_t dv,
                                           int64_t length, int64_t group,
                                           const DeviceLimits& limits);
Result<LinearAttentionTiling> linear_attention_tiling_from(
    const KernelTiling& tiling);
// Chunked LinearAttention for the rules without β (linear, gated): the
// chunked passes of Retention with a decay per key row; the output pass
// also keeps the chunk's cumulative log decays (C x d_k) in shared memory.
// Chosen from kChunkedMinLength tokens when it fits (ChunkTiling in
// constants 0, 1; d_k in 2), else the recurrent plan above.
uint32_t linear_attention_chunk_shared_bytes(const ChunkTiling& t, int64_t dk);
Result<KernelTiling> plan_linear_attention_form(int64_t dk, int64_t dv,
                                                int64_t length, int64_t group,
                                                int64_t batch_kv_heads,
                                                int64_t chunk_hint,
                                                bool delta_rule,
                                                const DeviceLimits& limits);
bool is_chunked_linear_attention(const KernelTiling& tiling);

}  // namespace seqrt::vulkan
