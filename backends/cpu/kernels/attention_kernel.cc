// Flash attention on the CPU. A work unit is (batch, kv head, query tile):
// its rows are the queries of every q head sharing that kv head (GQA reads
// the kv head once, without copying), so decode steps with Tq = 1 still
// give GEMM-shaped tiles. Keys are visited in tiles of kKeyTile; tiles that
// causality, the windows or nonpad_kv_seqlen hide from every row are never
// visited, tiles that all rows see whole are not masked. Softmax is the
// online form (running max m, sum l, rescaled output); sigmoid needs
// neither. When there are fewer units than threads, the key range of each
// unit is split and the partial results merged by their log-sum-exp.
// The tile products go through oneDNN's sgemm: measured on one core against
// a Highway register-blocked kernel (packed K tile, 4 rows x 64 keys),
// causal prefill T=512, H=8, d=64 took 5.4 ms with sgemm and 7.3 ms with
// the hand-written kernel, and decode was no faster either.
#include "backends/cpu/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/kernels/attention_simd.h"
#include "backends/cpu/kernels/attention_tile.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kKeyTile = 64;
constexpr int64_t kRowTarget = 64;  // rows of a query tile
constexpr int64_t kMinSplit = 256;  // fewest keys worth a split of their own
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Plan {
  int64_t group = 1;      // q heads per kv head
  int64_t tile_len = 1;   // query positions per tile
  int64_t num_tiles = 1;  // query tiles per (batch, kv head)
  int64_t rows_max = 1;   // group * tile_len
  int64_t num_units = 0;  // batch * kv_heads * num_tiles
  int64_t splits = 1;     // key-range parts per unit
};

Plan make_plan(const AttentionArgs& a) {
  Plan plan;
  plan.group = a.q_heads / a.kv_heads;
  plan.tile_len = std::clamp<int64_t>(kRowTarget / plan.group, 1, a.q_len);
  plan.num_tiles = (a.q_len + plan.tile_len - 1) / plan.tile_len;
  plan.rows_max = plan.group * plan.tile_len;
  plan.num_units = a.batch * a.kv_heads * plan.num_tiles;
  int64_t threads = max_threads();
  int64_t longest = a.kv_len;
  if (a.kv_lens != nullptr) {
    longest = 0;
    for (int64_t b = 0; b < a.batch; ++b) {
      longest = std::max(longest, a.kv_lens[b]);
    }
  }
  // Only short-query work is split: a long prefill has units enough.
  if (plan.num_units < 2 * threads && longest >= 2 * kMinSplit) {
    int64_t wanted = (4 * threads + plan.num_units - 1) / plan.num_units;
    plan.splits = std::clamp<int64_t>(longest / kMinSplit, 1, wanted);
  }
  return plan;
}

// Per-thread scratch, reused across units so it is touched only once.
struct Scratch {
  std::vector<float> q, s, o, m, l;
  std::vector<int64_t> lo, hi, mask_base;
  void reserve(const AttentionArgs& a, int64_t rows) {
    auto fit = [](auto& v, int64_t n) {
      if (static_cast<int64_t>(v.size()) < n) v.resize(n);
    };
    fit(q, rows * a.head_dim);
    fit(s, rows * kKeyTile);
    fit(o, rows * a.value_dim);
    fit(m, rows);
    fit(l, rows);
    fit(lo, rows);
    fit(hi, rows);
    fit(mask_base, rows);
  }
};

// The rows of one unit: row r is q head (kv_head*group + r / n) at query
// i0 + r % n, with n = i1 - i0.
struct Unit {
  int64_t b, kv_head, i0, i1, rows, len;
  int64_t band_lo, band_hi;    // union of the rows' visible key ranges
  int64_t inner_lo, inner_hi;  // keys every row sees (if lo < hi)
};

void row_band(const AttentionArgs& a, int64_t p, int64_t len, int64_t* lo,
              int64_t* hi) {
  int64_t l = 0, h = len;
  if (a.causal) h = std::min(h, p + 1);
  if (a.window_left >= 0) l = std::max(l, p - a.window_left);
  if (a.window_right >= 0) h = std::min(h, p + a.window_right + 1);
  *lo = l;
  *hi = std::max(l, h);
}

Unit make_unit(const AttentionArgs& a, const Plan& plan, int64_t index,
               Scratch& sc) {
  Unit u;
  int64_t tile = index % plan.num_tiles;
  int64_t bh = index / plan.num_tiles;
  u.b = bh / a.kv_heads;
  u.kv_head = bh % a.kv_heads;
  u.i0 = tile * plan.tile_len;
  u.i1 = std::min(a.q_len, u.i0 + plan.tile_len);
  int64_t n = u.i1 - u.i0;
  u.rows = plan.group * n;
  u.len = a.kv_lens != nullptr ? a.kv_lens[u.b] : a.kv_len;
  u.band_lo = std::numeric_limits<int64_t>::max();
  u.band_hi = 0;
  u.inner_lo = 0;
  u.inner_hi = u.len;
  for (int64_t r = 0; r < u.rows; ++r) {
    int64_t h = u.kv_head * plan.group + r / n;
    int64_t i = u.i0 + r % n;
    int64_t p0 = a.q_position0 >= 0 ? a.q_position0 : u.len - a.q_len;
    row_band(a, p0 + i, u.len, &sc.lo[r], &sc.hi[r]);
    if (sc.lo[r] < sc.hi[r]) {
      u.band_lo = std::min(u.band_lo, sc.lo[r]);
      u.band_hi = std::max(u.band_hi, sc.hi[r]);
    }
    u.inner_lo = std::max(u.inner_lo, sc.lo[r]);
    u.inner_hi = std::min(u.inner_hi, sc.hi[r]);
    sc.mask_base[r] =
        u.b * a.mask_stride[0] + h * a.mask_stride[1] + i * a.mask_stride[2];
    std::memcpy(
        &sc.q[r * a.head_dim],
        a.q + u.b * a.q_stride[0] + h * a.q_stride[1] + i * a.q_stride[2],
        sizeof(float) * a.head_dim);
  }
  if (u.band_lo >= u.band_hi) u.band_lo = u.band_hi = 0;
  return u;
}

// Hides the keys [j0, j0+bk) of tile S that a row may not see, and adds
// the float mask.
void mask_tile(const AttentionArgs& a, const Unit& u, const Scratch& sc,
               int64_t j0, int64_t bk, float* s) {
  for (int64_t r = 0; r < u.rows; ++r) {
    float* row = s + r * kKeyTile;
    int64_t lo = std::clamp(sc.lo[r] - j0, int64_t{0}, bk);
    int64_t hi = std::clamp(sc.hi[r] - j0, lo, bk);
    for (int64_t j = 0; j < lo; ++j) row[j] = kNegInf;
    for (int64_t j = hi; j < bk; ++j) row[j] = kNegInf;
    const int64_t base = sc.mask_base[r] + j0 * a.mask_stride[3];
    const int64_t step = a.mask_stride[3];
    if (a.mask_f32 != nullptr) {
      const float* mk = a.mask_f32 + base;
      for (int64_t j = lo; j < hi; ++j) row[j] += mk[j * step];
    } else if (a.mask_bool != nullptr) {
      const bool* mk = a.mask_bool + base;
      for (int64_t j = lo; j < hi; ++j) {
        if (!mk[j * step]) row[j] = kNegInf;
      }
    }
  }
}

// Turns the logits of a tile into weights P, rescaling the running output.
void softmax_tile(const Unit& u, const AttentionArgs& a, int64_t bk,
                  Scratch& sc) {
  for (int64_t r = 0; r < u.rows; ++r) {
    float* row = &sc.s[r * kKeyTile];
    float m_new = std::max(sc.m[r], max_value(row, bk));
    if (m_new == kNegInf) {  // nothing visible yet: weights are all 0
      std::fill(row, row + bk, 0.0f);
      continue;
    }
    float alpha = std::exp(sc.m[r] - m_new);
    sc.l[r] = sc.l[r] * alpha + exp_shifted_sum(row, bk, m_new);
    if (alpha != 1.0f) scale(alpha, &sc.o[r * a.value_dim], a.value_dim);
    sc.m[r] = m_new;
  }
}

// Accumulates keys [k0, k1) of the unit into sc.o / sc.m / sc.l.
void attend_range(const AttentionArgs& a, const Unit& u, int64_t k0, int64_t k1,
                  Scratch& sc) {
  std::fill_n(sc.o.begin(), u.rows * a.value_dim, 0.0f);
  std::fill_n(sc.m.begin(), u.rows, kNegInf);
  std::fill_n(sc.l.begin(), u.rows, 0.0f);
  const float* k = a.k + u.b * a.k_stride[0] + u.kv_head * a.k_stride[1];
  const float* v = a.v + u.b * a.v_stride[0] + u.kv_head * a.v_stride[1];
  const bool has_mask = a.mask_f32 != nullptr || a.mask_bool != nullptr;
  for (int64_t j0 = k0; j0 < k1; j0 += kKeyTile) {
    const int64_t bk = std::min(kKeyTile, k1 - j0);
    float* s = sc.s.data();
    sgemm(false, true, u.rows, bk, a.head_dim, a.scale, sc.q.data(), a.head_dim,
          k + j0 * a.k_stride[2], a.k_stride[2], 0.0f, s, kKeyTile);
    if (a.softcap > 0.0f) {
      for (int64_t r = 0; r < u.rows; ++r) {
        softcap_inplace(s + r * kKeyTile, bk, a.softcap);
      }
    }
    bool whole = !has_mask && j0 >= u.inner_lo && j0 + bk <= u.inner_hi;
    if (!whole) mask_tile(a, u, sc, j0, bk, s);
    if (a.sigmoid) {
      for (int64_t r = 0; r < u.rows; ++r) {
        float* row = s + r * kKeyTile;
        if (a.sigmoid_bias != 0.0f) {
          for (int64_t j = 0; j < bk; ++j) row[j] += a.sigmoid_bias;
        }
        sigmoid_inplace(row, bk);  // -inf (hidden) gives exactly 0
      }
    } else {
      softmax_tile(u, a, bk, sc);
    }
    sgemm(false, false, u.rows, a.value_dim, bk, 1.0f, s, kKeyTile,
          v + j0 * a.v_stride[2], a.v_stride[2], 1.0f, sc.o.data(),
          a.value_dim);
  }
}

float* y_row(const AttentionArgs& a, const Plan& plan, const Unit& u,
             int64_t r) {
  int64_t n = u.i1 - u.i0;
  int64_t h = u.kv_head * plan.group + r / n;
  int64_t i = u.i0 + r % n;
  return a.y + u.b * a.y_stride[0] + h * a.y_stride[1] + i * a.y_stride[2];
}

// The key range of split `part` of a unit, in whole tiles.
void split_range(const Unit& u, int64_t splits, int64_t part, int64_t* k0,
                 int64_t* k1) {
  int64_t tiles = (u.band_hi - u.band_lo + kKeyTile - 1) / kKeyTile;
  int64_t per = (tiles + splits - 1) / splits;
  *k0 = std::min(u.band_hi, u.band_lo + part * per * kKeyTile);
  *k1 = std::min(u.band_hi, *k0 + per * kKeyTile);
}

void run_whole(const AttentionArgs& a, const Plan& plan, int64_t index) {
  thread_local Scratch sc;
  sc.reserve(a, plan.rows_max);
  Unit u = make_unit(a, plan, index, sc);
  attend_range(a, u, u.band_lo, u.band_hi, sc);
  for (int64_t r = 0; r < u.rows; ++r) {
    float* y = y_row(a, plan, u, r);
    const float* o = &sc.o[r * a.value_dim];
    float inv = a.sigmoid ? 1.0f : (sc.l[r] > 0.0f ? 1.0f / sc.l[r] : 0.0f);
    for (int64_t c = 0; c < a.value_dim; ++c) y[c] = o[c] * inv;
  }
}

// The prefill path of attention_tile.h: no explicit mask or softcap (those
// take the sgemm path above), whole units, enough rows to fill the lanes.
bool use_tiles(const AttentionArgs& a, const Plan& plan) {
  return a.mask_f32 == nullptr && a.mask_bool == nullptr && a.softcap == 0.0f &&
         plan.splits == 1 && plan.rows_max >= tile_row_block() &&
         a.value_dim % tile_lanes() == 0 &&
         a.kv_len < std::numeric_limits<int32_t>::max();
}

// Per-thread scratch of the tiled path, transposed (rows in the lanes).
struct TileScratch {
  std::vector<float> qt, st, o, m, l, alpha, tile_max;
  std::vector<int32_t> lo, hi;
  void reserve(const AttentionArgs& a, int64_t rows_padded) {
    auto fit = [](auto& v, int64_t n) {
      if (static_cast<int64_t>(v.size()) < n) v.resize(n);
    };
    fit(qt, a.head_dim * rows_padded);
    fit(st, kKeyTile * rows_padded);
    fit(o, rows_padded * a.value_dim);
    for (auto* v : {&m, &l, &alpha, &tile_max}) fit(*v, rows_padded);
    fit(lo, rows_padded);
    fit(hi, rows_padded);
  }
};

// Q^T of the unit scaled into the log2 domain, the rows' visible key
// ranges, and the running state reset; pad rows are zero and see nothing.
void start_tiled_unit(const AttentionArgs& a, const Unit& u, const Scratch& sc,
                      int64_t rows_padded, TileScratch& ts) {
  constexpr float kLog2e = 1.44269504088896341f;
  const float q_scale = a.scale * kLog2e;
  for (int64_t c = 0; c < a.head_dim; ++c) {
    float* col = &ts.qt[c * rows_padded];
    for (int64_t r = 0; r < u.rows; ++r) {
      col[r] = sc.q[r * a.head_dim + c] * q_scale;
    }
    std::fill(col + u.rows, col + rows_padded, 0.0f);
  }
  for (int64_t r = 0; r < rows_padded; ++r) {
    bool real = r < u.rows;
    ts.lo[r] = real ? static_cast<int32_t>(sc.lo[r]) : 0;
    ts.hi[r] = real ? static_cast<int32_t>(sc.hi[r]) : 0;
  }
  std::fill_n(ts.o.begin(), rows_padded * a.value_dim, 0.0f);
  std::fill_n(ts.m.begin(), rows_padded, kNegInf);
  std::fill_n(ts.l.begin(), rows_padded, 0.0f);
}

void run_tiled(const AttentionArgs& a, const Plan& plan, int64_t index) {
  thread_local Scratch sc;
  thread_local TileScratch ts;
  sc.reserve(a, plan.rows_max);
  const int64_t block = tile_row_block();
  ts.reserve(a, (plan.rows_max + block - 1) / block * block);
  const Unit u = make_unit(a, plan, index, sc);
  const int64_t rows_padded = (u.rows + block - 1) / block * block;
  start_tiled_unit(a, u, sc, rows_padded, ts);
  const float* k = a.k + u.b * a.k_stride[0] + u.kv_head * a.k_stride[1];
  const float* v = a.v + u.b * a.v_stride[0] + u.kv_head * a.v_stride[1];
  constexpr float kLog2e = 1.44269504088896341f;
  for (int64_t j0 = u.band_lo; j0 < u.band_hi; j0 += kKeyTile) {
    const int64_t bk = std::min(kKeyTile, u.band_hi - j0);
    ScoreTileArgs s;
    s.k = k + j0 * a.k_stride[2];
    s.k_stride = a.k_stride[2];
    s.keys = bk;
    s.head_dim = a.head_dim;
    s.qt = ts.qt.data();
    s.rows_padded = rows_padded;
    s.st = ts.st.data();
    s.lo = ts.lo.data();
    s.hi = ts.hi.data();
    s.j0 = static_cast<int32_t>(j0);
    s.whole = j0 >= u.inner_lo && j0 + bk <= u.inner_hi;
    s.sigmoid = a.sigmoid;
    s.tile_max = ts.tile_max.data();
    if (!a.sigmoid) std::fill_n(ts.tile_max.begin(), rows_padded, kNegInf);
    score_tile(s);
    if (a.sigmoid) {
      sigmoid_tile(ts.st.data(), bk * rows_padded, a.sigmoid_bias * kLog2e,
                   s.whole);
    } else {
      online_softmax_tile(ts.st.data(), bk, rows_padded, ts.tile_max.data(),
                          ts.m.data(), ts.l.data(), ts.alpha.data());
    }
    accumulate_pv(ts.st.data(), bk, u.rows, rows_padded, v + j0 * a.v_stride[2],
                  a.v_stride[2], a.value_dim,
                  a.sigmoid ? nullptr : ts.alpha.data(), ts.o.data());
  }
  for (int64_t r = 0; r < u.rows; ++r) {
    float* y = y_row(a, plan, u, r);
    const float* o = &ts.o[r * a.value_dim];
    float inv = a.sigmoid ? 1.0f : (ts.l[r] > 0.0f ? 1.0f / ts.l[r] : 0.0f);
    for (int64_t c = 0; c < a.value_dim; ++c) y[c] = o[c] * inv;
  }
}

// Partial results of one split: per row m, l, then dv outputs.
int64_t partial_stride(const AttentionArgs& a) { return a.value_dim + 2; }

void run_split(const AttentionArgs& a, const Plan& plan, int64_t item,
               float* partials) {
  thread_local Scratch sc;
  sc.reserve(a, plan.rows_max);
  int64_t index = item / plan.splits;
  int64_t part = item % plan.splits;
  Unit u = make_unit(a, plan, index, sc);
  int64_t k0, k1;
  split_range(u, plan.splits, part, &k0, &k1);
  attend_range(a, u, k0, k1, sc);
  float* out = partials + item * plan.rows_max * partial_stride(a);
  for (int64_t r = 0; r < u.rows; ++r) {
    float* p = out + r * partial_stride(a);
    p[0] = sc.m[r];
    p[1] = sc.l[r];
    std::memcpy(p + 2, &sc.o[r * a.value_dim], sizeof(float) * a.value_dim);
  }
}

// Log-sum-exp merge of a unit's splits: each part's output and sum are
// rescaled from its own max to the common one.
void merge_splits(const AttentionArgs& a, const Plan& plan, int64_t index,
                  const float* partials) {
  thread_local Scratch sc;
  sc.reserve(a, plan.rows_max);
  Unit u = make_unit(a, plan, index, sc);
  const int64_t ps = partial_stride(a);
  const float* first = partials + index * plan.splits * plan.rows_max * ps;
  for (int64_t r = 0; r < u.rows; ++r) {
    float* y = y_row(a, plan, u, r);
    std::fill_n(y, a.value_dim, 0.0f);
    float m = kNegInf;
    for (int64_t part = 0; part < plan.splits; ++part) {
      m = std::max(m, first[(part * plan.rows_max + r) * ps]);
    }
    if (!a.sigmoid && m == kNegInf) continue;
    float l = 0.0f;
    for (int64_t part = 0; part < plan.splits; ++part) {
      const float* p = first + (part * plan.rows_max + r) * ps;
      float w = a.sigmoid ? 1.0f : std::exp(p[0] - m);
      l += w * p[1];
      if (w != 0.0f) axpy(w, p + 2, y, a.value_dim);
    }
    if (!a.sigmoid) scale(l > 0.0f ? 1.0f / l : 0.0f, y, a.value_dim);
  }
}

}  // namespace

void attention_forward(const AttentionArgs& args) {
  if (args.batch == 0 || args.q_heads == 0 || args.q_len == 0 ||
      args.value_dim == 0) {
    return;
  }
  const Plan plan = make_plan(args);
  if (use_tiles(args, plan)) {
    parallel_for(plan.num_units,
                 [&](int64_t unit) { run_tiled(args, plan, unit); });
    return;
  }
  if (plan.splits == 1) {
    parallel_for(plan.num_units,
                 [&](int64_t unit) { run_whole(args, plan, unit); });
    return;
  }
  std::vector<float> partials(static_cast<size_t>(
      plan.num_units * plan.splits * plan.rows_max * partial_stride(args)));
  parallel_for(plan.num_units * plan.splits, [&](int64_t item) {
    run_split(args, plan, item, partials.data());
  });
  parallel_for(plan.num_units, [&](int64_t unit) {
    merge_splits(args, plan, unit, partials.data());
  });
}

}  // namespace seqrt::cpu
