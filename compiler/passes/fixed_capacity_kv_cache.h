// The step-by-step form of a decoder whose KV cache grows by concatenation
// (issue 25 item 3, DESIGN.md §4 "KV caches are preallocated to a capacity
// with a valid length"). An export's seqrt::Attention (after the default
// passes) takes past_key/past_value state inputs of (B,Hkv,past,d) and
// returns present_* of (B,Hkv,past+Tk,d): each step copies the whole cache.
// The rewritten graph holds every such cache at a fixed capacity C instead:
//
//   present_key = TensorScatter(past_key (B,Hkv,C,d), K, write_indices = L)
//   Y = seqrt::Attention(Q, present_key, present_value, mask,
//                        nonpad_kv_seqlen = L + Tk)
//
// where L, the number of cached tokens, is a new scalar int64 state
// `seqrt.kv_length` (output `seqrt.kv_length_next` = L + Tk). The
// TensorScatter updates the cache in place when the Stream hands it over,
// so a step costs its new rows. Reads of the cache's shape (an export's
// position ids, Range(past, past+seq)) read L instead of C, so positions
// stay right, and no dim of the graph depends on L: one plan serves every
// decode step.
//
// An input named `attention_mask` of rank 2 (batch, past+seq), the Hugging
// Face padding mask, must be fed padded with zeros to (batch, C): its
// causal mask then spans the capacity, with the keys past L + Tk hidden.
// runtime/stream.cc's KV-cache mode does that padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape.h"

namespace seqrt {

inline constexpr char kKvLengthInput[] = "seqrt.kv_length";
inline constexpr char kKvLengthOutput[] = "seqrt.kv_length_next";
inline constexpr char kPaddedMaskInput[] = "attention_mask";

struct KvCacheRewrite {
  Graph graph;  // typed; its state pairs are the original ones plus length
  int64_t capacity = 0;
  // State inputs now (B,Hkv,C,d), time on axis 2, by name.
  std::vector<std::string> cache_inputs;
  // Inputs the caller pads with zeros to C on their last axis.
  std::vector<std::string> padded_inputs;
  // Tk: the size of K's time axis in the original graph (a symbol such as
  // "seq", or a fixed size), so the caller can tell a step's new tokens
  // from its feeds.
  Dim new_tokens;
};

// The rewrite of `graph` (already optimised: its attentions fused) for a
// cache of `capacity` tokens. Fails naming the reason when the graph has
// no KV cache of this form or a state pair reads it otherwise (a node other
// than Shape or an Attention's past input reading the cache, a present
// read by other nodes, a cache with a non-empty initial value, a mask of a
// fixed length other than 1).
Result<KvCacheRewrite> fixed_capacity_kv_cache(const Graph& graph,
                                               int64_t capacity);

}  // namespace seqrt
