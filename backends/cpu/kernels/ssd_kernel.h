// The chunked form of the CPU SSD kernel (ssd.cc), split out to keep each
// file one idea: what one head sees, and how its chunks are computed.
#pragma once

#include <cstdint>

#include "ops/sequence/ssd.h"

namespace seqrt::cpu {

struct StepRule {
  bool softplus;
  float dt_min, dt_max;
};

// One (batch, head): pointers at token 0 of this batch row; x and y rows
// are H·P apart, Bm and Cm rows G·N apart (group offset not applied).
struct SsdHead {
  const SsdDims& dims;
  float a;          // A_h
  int64_t group;    // h / (H/G)
  const float* dt;  // Δ per token, after softplus and clamping
  const float* x;
  const float* b;
  const float* c;
  float* y;  // Σ h·C only; the D-skip and gate are applied by the caller
};

// Chunk length for this shape (the chunk_size attribute is a hint within
// limits that suit the GEMMs), or 0 when the recurrent form is faster.
int64_t ssd_chunk_length(const SsdDims& dims, int64_t hint);

// Whether every decay exponent Δ·A of the head is ≤ 0: the chunked form
// clamps cumulative exponents to ≤ 0, exact only then; others run the
// recurrent form.
bool decays_bounded(const SsdHead& head);

// The chunked form over the whole sequence; `state` (P×N) in and out.
void chunked_head(const SsdHead& head, int64_t chunk, float* state);

// Heads [first, first + heads) of one (batch, group), which share B and C:
// their a, Δ rows (heads × L, after softplus and clamping) and x/y at the
// first of them; b and c with the group offset applied.
struct SsdGroup {
  const SsdDims& dims;
  int64_t heads;
  const float* a;
  const float* dt;
  const float* x;
  const float* b;
  const float* c;
  float* y;
};

// The chunked form for several heads of a group at once (ssd_group.cc),
// whose decay exponents are all ≤ 0; `states` (heads × P × N) in and out.
// Runs on the calling thread.
void chunked_group(const SsdGroup& group, int64_t chunk, float* states);

}  // namespace seqrt::cpu
