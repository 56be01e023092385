// The vector tile kernels of the prefill ("tiled") path of the CPU flash
// attention. A query tile is held transposed, rows in the vector lanes:
// Q^T (d x R), S^T and P^T (keys x R), so the softmax's per-row max and sum
// are plain vector ops across keys (no horizontal reductions), K and V are
// read in place from the cache (no packing), and sigmoid scoring is applied
// in the registers of the score product, with no pass of its own.
// Logits are in the log2 domain (Q is pre-scaled by scale * log2(e)) so the
// exponentials are 2^x.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// Rows of a tile are padded to a multiple of this (two vectors of floats).
int64_t tile_row_block();
// Value widths must be a multiple of this (one vector of floats).
int64_t tile_lanes();

struct ScoreTileArgs {
  const float* k = nullptr;  // key j0 of the tile; key j at k + j * k_stride
  int64_t k_stride = 0;
  int64_t keys = 0;           // bk, the keys of this tile
  int64_t head_dim = 0;       // d
  const float* qt = nullptr;  // Q^T, head_dim x rows_padded
  int64_t rows_padded = 0;    // R
  float* st = nullptr;        // out: keys x R
  // Key position j0 + j is visible to row r iff lo[r] <= j0 + j < hi[r];
  // not checked when `whole` (every row sees every key of the tile).
  const int32_t* lo = nullptr;
  const int32_t* hi = nullptr;
  int32_t j0 = 0;
  bool whole = false;
  // st = s, hidden keys -inf; unless `sigmoid`, tile_max[r] = max over the
  // tile's keys.
  bool sigmoid = false;
  float* tile_max = nullptr;  // R floats, in/out
};
void score_tile(const ScoreTileArgs& args);

// Online softmax over a tile of logits st (keys x R): m_new = max(m,
// tile_max), alpha = 2^(m - m_new), st = 2^(st - m_new),
// l = l * alpha + sum over keys. Rows with nothing visible keep weights 0.
void online_softmax_tile(float* st, int64_t keys, int64_t rows_padded,
                         const float* tile_max, float* m, float* l,
                         float* alpha);

// st = 1 / (1 + 2^-(st + bias2)) over `count` floats (a multiple of the
// lanes); -inf (hidden) gives exactly 0 unless `whole` (no hidden keys).
void sigmoid_tile(float* st, int64_t count, float bias2, bool whole);

// O[r][:] = alpha[r] * O[r][:] + sum_j P^T[j][r] * V[j][:] for r < rows
// (rounded up to 4, at most rows_padded); alpha == nullptr means 1.
// O is (rows_padded x dv) row-major; dv must be a multiple of tile_lanes().
void accumulate_pv(const float* pt, int64_t keys, int64_t rows,
                   int64_t rows_padded, const float* v, int64_t v_stride,
                   int64_t dv, const float* alpha, float* o);

}  // namespace seqrt::cpu
