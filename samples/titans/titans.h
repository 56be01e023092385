// Titans blocks (Behrouz et al., "Titans: Learning to Memorize at Test
// Time") as seqrt graphs: the long-term memory is seqrt::NeuralMemory, the
// short-term memory seqrt::Attention, everything else standard ops. The
// wiring of each variant is documented in README.md.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace seqrt::titans {

enum class Variant { kMac, kMag, kMal };

// Sizes of the sample blocks: input x (kBatch, kSeq, kModel) f32.
constexpr int64_t kBatch = 2;
constexpr int64_t kSeq = 32;
constexpr int64_t kModel = 32;  // D
constexpr int64_t kHeads = 2;   // H; head size d = D / H
constexpr int64_t kHeadDim = kModel / kHeads;
constexpr int64_t kHidden = 4 * kHeadDim;  // m: the memory MLP's width
constexpr int64_t kPersistent = 4;         // N_p persistent memory tokens
constexpr int64_t kSegment = 8;            // MAC segment length
constexpr int64_t kWindow = 8;             // MAG / MAL sliding window
constexpr int64_t kChunk = 4;              // NeuralMemory chunk_size

const char* variant_name(Variant variant);  // "mac", "mag", "mal"

// The block as a verified, type-checked graph with input "x" and output
// "y", both (kBatch, kSeq, kModel); weights drawn from `seed`.
Result<Graph> build_titans_block(Variant variant, uint32_t seed);

}  // namespace seqrt::titans
