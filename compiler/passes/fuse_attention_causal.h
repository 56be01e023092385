// Recognises the causal mask that Hugging Face GPT-2 style models build at
// run time, so that fuse_attention can give Attention is_causal instead of
// a mask: Where(Slice(tril, [Tk - Tq, 0], [Tk, Tk], axes [2, 3]), S, -big)
// with Tq and Tk read from the shapes of Q and K (Shape -> Gather, or
// Shape -> Slice -> Squeeze), the two axes sliced by one Slice or two.
#pragma once

#include <vector>

#include "compiler/passes/match.h"

namespace seqrt {

// The values whose axis 2 holds the query and the key lengths at run time.
struct AttentionLengths {
  std::vector<ValueId> queries;  // Q as multiplied (scaled or not)
  std::vector<ValueId> keys;     // K and V as multiplied, cache included
  // Axis 2 of Q and of the keys appended this run (all keys without a
  // cache): when these are the same known dim, Tk >= Tq at every run.
  Dim query_len;
  Dim new_key_len;
};

// True when `mask`, the bool condition of Where(mask, S, -big), provably
// lets query i see exactly keys j <= Tk - Tq + i at every run, which is
// Attention's is_causal: a slice of a constant lower-triangular (M, M)
// matrix (M >= 2, leading dims 1) taking rows [Tk - Tq, Tk) and columns
// [0, Tk), with Tk >= Tq. A run with Tk > M fails in the decomposition (the
// mask cannot broadcast), so every run it completes agrees.
bool is_end_aligned_causal_mask(const Matcher& m, ValueId mask,
                                const AttentionLengths& lengths);

}  // namespace seqrt
