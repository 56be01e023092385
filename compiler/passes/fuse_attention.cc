// Scaled dot-product attention as PyTorch and Hugging Face export it:
//   S = MatMul(Q', Transpose(K', perm 0,1,3,2))      Q', K' maybe scaled
//   S = Mul(S, c) | Div(S, c)                         optional
//   S = Add(S, float_mask) | Where(bool_mask, S, -big) optional
//   Y = MatMul(Softmax(S, last axis) [Casts to its own dtype], V')
// becomes seqrt::Attention(Q, K, V, mask?, past_key?, past_value?) with
// scale = the product of the constants. K' and V' may be
//   - Hugging Face repeat_kv (GQA): Reshape(Expand(Unsqueeze(x, 2))), which
//     the fused node reads un-repeated;
//   - a KV cache Concat(past, new) on the sequence axis, which becomes the
//     past_* inputs, its output the present_* outputs of the fused node;
//   - BERT's Transpose(X, perm 0,2,3,1) of X (B,T,H,d): K becomes
//     Transpose(X, perm 0,2,1,3);
//   - the dynamo exporter's Kᵀ through a flattened 3-D transpose,
//     Reshape(Transpose(Reshape(K, (B*H,T,d)), 0,2,1), (B,H,d,T)), and its
//     Where(IsNaN(P), 0, P) guard after the Softmax (Attention gives 0 on
//     a row with no visible key itself).
// S may also pass through a Cast to its own dtype (Hugging Face's
// w.to(w.dtype)). A Where mask that is the causal triangle sliced at run
// time (fuse_attention_causal.h) becomes is_causal, with no mask input.
// Otherwise a Where(bool_mask, S, fill) with a constant fill below -1e30
// (finfo.min)
// becomes the float mask Where(bool_mask, 0, fill): fp32 absorbs any
// logit into such a fill, so every row, one with no visible key included
// (the decomposition averages V there), gives the same. Attention's own
// bool mask would give 0 on such a row. With fill = -inf the decomposition
// gives NaN on such a row and the fused node 0.
#include <cmath>
#include <functional>
#include <vector>

#include "compiler/passes/fuse_attention_causal.h"
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"
#include "graph/dim_expr.h"

namespace seqrt {
namespace {

constexpr double kMaskedLogit = -1e30;

bool is_op(const Matcher& m, int n, const char* op) {
  return n >= 0 && m.node(n).op == op && m.node(n).domain.empty();
}

const Shape* rank4(const Matcher& m, ValueId id) {
  const Shape* shape = m.shape(id);
  return shape != nullptr && shape->rank() == 4 ? shape : nullptr;
}

// Strips Mul(v, c) / Div(v, c) by a scalar constant, folding c into scale.
ValueId strip_scale(const Matcher& m, ValueId v, std::set<int>& nodes,
                    double& scale) {
  int n = m.uses().producer[v];
  if (!is_op(m, n, "Mul") && !is_op(m, n, "Div")) return v;
  auto found = m.with_scalar(m.node(n));
  if (!found && is_op(m, n, "Div") && m.node(n).attrs.empty()) {
    // A scale computed from a fixed dim, as torch.full([], d ** 0.5).
    const ValueId divisor = m.node(n).inputs[1];
    const std::optional<double> value = computed_scalar(m, divisor);
    if (value && m.shape(divisor)->rank() == 0 &&
        m.dtype(divisor) == m.dtype(v)) {
      found = std::make_pair(m.node(n).inputs[0], *value);
    }
  }
  if (!found || found->second == 0 || !std::isfinite(found->second)) return v;
  scale *= m.node(n).op == "Mul" ? found->second : 1.0 / found->second;
  nodes.insert(n);
  return found->first;
}

// A value read by the fused node: the original, un-repeated, un-cached one.
struct Source {
  ValueId value = kNoValue;    // K or V as Attention reads it
  ValueId past = kNoValue;     // past_key / past_value
  ValueId present = kNoValue;  // the Concat output
};

// Reshape(Expand(Unsqueeze(x, [2]), (B,H,n,T,d)), (B,H*n,T,d)): x.
ValueId strip_repeat_kv(const Matcher& m, ValueId v, std::set<int>& nodes) {
  // allowzero (the dynamo exporter sets it) changes nothing here: the
  // shapes checked below leave no dim to copy from the input.
  int reshape_n = m.uses().producer[v];
  if (!is_op(m, reshape_n, "Reshape") ||
      !has_only_attrs(m.node(reshape_n), {"allowzero"})) {
    return v;
  }
  ValueId expanded = m.node(reshape_n).inputs[0];
  int expand_n = m.producer(expanded, "Expand");
  ValueId unsqueezed = expand_n < 0 ? kNoValue : m.node(expand_n).inputs[0];
  int unsqueeze_n = m.producer(unsqueezed, "Unsqueeze");
  if (unsqueeze_n < 0 || !m.node(expand_n).attrs.empty() ||
      !m.node(unsqueeze_n).attrs.empty() ||
      m.node(unsqueeze_n).inputs.size() != 2 ||
      m.ints(m.node(unsqueeze_n).inputs[1]) == std::nullopt) {
    return v;
  }
  std::vector<int64_t> axes = *m.ints(m.node(unsqueeze_n).inputs[1]);
  if (axes.size() != 1 || normalize_axis(axes[0], 5) != 2) return v;
  ValueId x = m.node(unsqueeze_n).inputs[0];
  const Shape* xs = rank4(m, x);
  const Shape* es = m.shape(expanded);
  const Shape* out = rank4(m, v);
  if (xs == nullptr || es == nullptr || out == nullptr || es->rank() != 5) {
    return v;
  }
  const Dim& heads = (*xs)[1];
  const Dim& reps = (*es)[2];
  bool same = (*es)[0] == (*xs)[0] && (*es)[1] == heads &&
              (*es)[3] == (*xs)[2] && (*es)[4] == (*xs)[3] &&
              (*out)[0] == (*xs)[0] && (*out)[2] == (*xs)[2] &&
              (*out)[3] == (*xs)[3];
  if (!same || !heads.is_fixed() || !reps.is_fixed() ||
      (*out)[1] != Dim(heads.value() * reps.value())) {
    return v;
  }
  nodes.insert({reshape_n, expand_n, unsqueeze_n});
  return x;
}

// Concat(past, new) on axis 2 of rank-4 values; strips it into `source`.
void strip_cache(const Matcher& m, Source& source, std::set<int>& nodes) {
  int concat_n = m.producer(source.value, "Concat");
  if (concat_n < 0) return;
  const Node& concat = m.node(concat_n);
  const Attribute* axis = concat.attr("axis");
  if (concat.inputs.size() != 2 || axis == nullptr ||
      axis->type() != AttrType::kInt ||
      normalize_axis(axis->as_int(), 4) != 2 ||
      rank4(m, concat.inputs[0]) == nullptr ||
      rank4(m, concat.inputs[1]) == nullptr) {
    return;
  }
  nodes.insert(concat_n);
  source.present = source.value;
  source.past = concat.inputs[0];
  source.value = concat.inputs[1];
}

Source strip_source(const Matcher& m, ValueId v, std::set<int>& nodes) {
  Source source;
  source.value = strip_repeat_kv(m, v, nodes);
  strip_cache(m, source, nodes);
  return source;
}

// The scores' producer chain back to MatMul(Q', K'^T).
struct Scores {
  int matmul = -1;
  ValueId q = kNoValue;
  Source key;
  ValueId bert_x = kNoValue;  // K is Transpose(bert_x, 0,2,1,3)
  ValueId k_full = kNoValue;  // K as transposed: repeated, with any cache
  double scale = 1.0;
};

// x for Cast(x) to x's own dtype, else v.
ValueId strip_same_cast(const Matcher& m, ValueId v, std::set<int>& nodes) {
  const int n = m.producer(v, "Cast");
  if (n < 0 || !has_only_attrs(m.node(n), {"to", "saturate"}) ||
      m.dtype(m.node(n).inputs[0]) != m.dtype(v)) {
    return v;
  }
  nodes.insert(n);
  return m.node(n).inputs[0];
}

// The dynamo exporter's Kᵀ: Reshape(Transpose(Reshape(k, (B*H,T,d)),
// perm 0,2,1), (B,H,d,T)) of k (B,H,T,d): k, when the shapes prove it.
ValueId strip_flat_transpose(const Matcher& m, ValueId kt,
                             std::set<int>& nodes) {
  const int outer_n = m.producer(kt, "Reshape");
  if (outer_n < 0 || !has_only_attrs(m.node(outer_n), {"allowzero"})) {
    return kNoValue;
  }
  const ValueId flat_t = m.node(outer_n).inputs[0];
  const int transpose_n = m.producer(flat_t, "Transpose");
  const Attribute* perm =
      transpose_n < 0 ? nullptr : m.node(transpose_n).attr("perm");
  if (perm == nullptr || perm->type() != AttrType::kInts ||
      perm->as_ints() != std::vector<int64_t>{0, 2, 1}) {
    return kNoValue;
  }
  const ValueId flat = m.node(transpose_n).inputs[0];
  const int inner_n = m.producer(flat, "Reshape");
  if (inner_n < 0 || !has_only_attrs(m.node(inner_n), {"allowzero"})) {
    return kNoValue;
  }
  const ValueId k = m.node(inner_n).inputs[0];
  const Shape* ks = rank4(m, k);
  const Shape* fs = m.shape(flat);
  const Shape* ts = rank4(m, kt);
  if (ks == nullptr || fs == nullptr || ts == nullptr || fs->rank() != 3) {
    return kNoValue;
  }
  const Shape& kd = *ks;
  const bool proven = (*fs)[0] == dim_mul(kd[0], kd[1]) && (*fs)[1] == kd[2] &&
                      (*fs)[2] == kd[3] && !(*fs)[0].is_unknown() &&
                      !kd[2].is_unknown() && !kd[3].is_unknown() &&
                      *ts == Shape({kd[0], kd[1], kd[3], kd[2]});
  if (!proven) return kNoValue;
  nodes.insert({outer_n, transpose_n, inner_n});
  return k;
}

std::optional<Scores> match_scores(const Matcher& m, ValueId s,
                                   std::set<int>& nodes) {
  Scores scores;
  ValueId raw =
      strip_scale(m, strip_same_cast(m, s, nodes), nodes, scores.scale);
  scores.matmul = m.producer(raw, "MatMul");
  if (scores.matmul < 0) return std::nullopt;
  nodes.insert(scores.matmul);
  const Node& mm = m.node(scores.matmul);
  scores.q = strip_scale(m, mm.inputs[0], nodes, scores.scale);
  ValueId kt = strip_scale(m, mm.inputs[1], nodes, scores.scale);
  if (ValueId k = strip_flat_transpose(m, kt, nodes); k != kNoValue) {
    scores.k_full = k;
    k = strip_scale(m, k, nodes, scores.scale);
    scores.key = strip_source(m, k, nodes);
    return scores;
  }
  int transpose_n = m.producer(kt, "Transpose");
  const Attribute* perm =
      transpose_n < 0 ? nullptr : m.node(transpose_n).attr("perm");
  if (perm == nullptr || perm->type() != AttrType::kInts) return std::nullopt;
  nodes.insert(transpose_n);
  ValueId k = m.node(transpose_n).inputs[0];
  scores.k_full = k;
  if (perm->as_ints() == std::vector<int64_t>{0, 2, 3, 1}) {
    if (rank4(m, k) == nullptr) return std::nullopt;
    scores.bert_x = k;
    return scores;
  }
  if (perm->as_ints() != std::vector<int64_t>{0, 1, 3, 2}) return std::nullopt;
  k = strip_scale(m, k, nodes, scores.scale);
  scores.key = strip_source(m, k, nodes);
  return scores;
}

// Whether masking `scores` gave `masked` without widening it. The last dim
// is exempt: the MatMul with V contracts it against V's keys, which are
// the scores' keys, so no run can widen it.
bool keeps_shape(const Shape* scores, const Shape* masked) {
  if (scores == nullptr || masked == nullptr || scores->rank() != 4 ||
      masked->rank() != 4) {
    return false;
  }
  for (size_t d = 0; d < 3; ++d) {
    if ((*scores)[d] != (*masked)[d]) return false;
  }
  return true;
}

// The logits before masking and how they are masked.
struct Masking {
  ValueId scores = kNoValue;
  ValueId mask = kNoValue;  // float mask, or bool mask when fill is set
  ValueId fill = kNoValue;  // the Where's fill for masked logits
  // Inference could not tell that the Where keeps S's shape (a mask sliced
  // at run time): only a mask proven causal may then be fused.
  bool shape_unproven = false;
};

// Add(S, mask) | Add(mask, S) | Where(mask, S, -big) before the Softmax;
// S alone when there is neither.
Masking strip_mask(const Matcher& m, ValueId logits, std::set<int>& nodes) {
  int n = m.uses().producer[logits];
  const Shape* out = m.shape(logits);
  if (n < 0 || out == nullptr || !m.node(n).attrs.empty()) {
    return {logits};
  }
  const Node& node = m.node(n);
  if (is_op(m, n, "Add")) {
    for (int side = 0; side < 2; ++side) {
      ValueId s = node.inputs[side];
      ValueId mask = node.inputs[1 - side];
      if (m.producer(s, "MatMul") < 0 && m.producer(s, "Mul") < 0 &&
          m.producer(s, "Div") < 0) {
        continue;
      }
      const Shape* ms = m.shape(mask);
      if (!keeps_shape(m.shape(s), out) || ms == nullptr || ms->rank() > 4 ||
          m.dtype(mask) != m.dtype(s)) {
        continue;
      }
      nodes.insert(n);
      return {s, mask};
    }
  }
  if (is_op(m, n, "Where")) {
    std::optional<double> fill = m.scalar(node.inputs[2]);
    const Shape* cs = m.shape(node.inputs[0]);
    const Shape* ss = m.shape(node.inputs[1]);
    if (fill && *fill <= kMaskedLogit && cs != nullptr && cs->rank() <= 4 &&
        m.dtype(node.inputs[0]) == DType::kBool) {
      nodes.insert(n);
      return {node.inputs[1], node.inputs[0], node.inputs[2],
              !keeps_shape(ss, out)};
    }
  }
  return {logits};
}

// Softmax(S, last axis), through Casts to its own dtype (softmax(dtype=
// float32) then .to(q.dtype) in float32 exports two).
// Where(IsNaN(p), 0, p), the dynamo exporter's guard for rows with no
// visible key: p. Attention gives 0 on such rows itself.
ValueId strip_nan_guard(const Matcher& m, ValueId p, std::set<int>& nodes) {
  const int where_n = m.producer(p, "Where");
  if (where_n < 0) return p;
  const Node& where = m.node(where_n);
  const int isnan_n = m.producer(where.inputs[0], "IsNaN");
  const std::optional<double> zero = m.scalar(where.inputs[1]);
  if (isnan_n < 0 || !zero || *zero != 0.0 ||
      m.node(isnan_n).inputs[0] != where.inputs[2] ||
      m.uses().use_count(where.inputs[0]) != 1) {
    return p;
  }
  nodes.insert({where_n, isnan_n});
  return where.inputs[2];
}

int match_softmax(const Matcher& m, ValueId p, std::set<int>& nodes) {
  p = strip_nan_guard(m, p, nodes);
  for (int cast_n = m.producer(p, "Cast"); cast_n >= 0;
       cast_n = m.producer(p, "Cast")) {
    const Node& cast = m.node(cast_n);
    if (!has_only_attrs(cast, {"to", "saturate"}) ||
        m.dtype(cast.inputs[0]) != m.dtype(p)) {
      return -1;
    }
    nodes.insert(cast_n);
    p = cast.inputs[0];
  }
  int softmax_n = m.producer(p, "Softmax");
  const Shape* shape = rank4(m, p);
  if (softmax_n < 0 || shape == nullptr ||
      !has_only_attrs(m.node(softmax_n), {"axis"}) ||
      normalize_axis(int_attr(m.node(softmax_n), "axis", -1), 4) != 3) {
    return -1;
  }
  nodes.insert(softmax_n);
  return softmax_n;
}

// Q (B,H,Tq,d), K (B,Hk,Tk,d), V (B,Hk,Tk,dv), Y (B,H,Tq,dv): what MatMul
// broadcasting does equals Attention's head sharing when the batch and
// sequence dims agree (the heads are checked on the repeated K and V).
bool shapes_agree(const Matcher& m, ValueId q, const Shape& ks, ValueId v,
                  const Shape& ys) {
  const Shape* qs = rank4(m, q);
  const Shape* vs = rank4(m, v);
  if (qs == nullptr || vs == nullptr || ys.rank() != 4) return false;
  return ks[0] == (*qs)[0] && (*vs)[0] == (*qs)[0] && ks[3] == (*qs)[3] &&
         (*vs)[1] == ks[1] && (*vs)[2] == ks[2] && ys[0] == (*qs)[0] &&
         ys[1] == (*qs)[1] && ys[2] == (*qs)[2] && ys[3] == (*vs)[3] &&
         is_float(m.dtype(q)) && m.dtype(v) == m.dtype(q);
}

// The heads of the K and V that the decomposition multiplies (after any
// repeat) must be Q's or 1, the two cases MatMul broadcasting allows and
// Attention shares the same way.
bool heads_agree(const Matcher& m, ValueId q, const Dim& k_heads,
                 ValueId repeated_v) {
  const Dim& q_heads = (*rank4(m, q))[1];
  const Dim& v_heads = (*rank4(m, repeated_v))[1];
  return k_heads == v_heads && (v_heads == q_heads || v_heads == Dim(1));
}

// The shape of K as the fused node reads it; nullopt when the key side
// does not fit the value side.
std::optional<Shape> key_shape(const Matcher& m, const Scores& scores,
                               const Source& value, ValueId repeated_v) {
  if (scores.bert_x != kNoValue) {
    const Shape& x = *rank4(m, scores.bert_x);
    if (value.past != kNoValue || value.value != repeated_v ||
        m.dtype(scores.bert_x) != m.dtype(scores.q) ||
        !heads_agree(m, scores.q, x[2], repeated_v)) {
      return std::nullopt;
    }
    return Shape({x[0], x[2], x[1], x[3]});
  }
  const Shape* repeated_k = rank4(m, m.node(scores.matmul).inputs[1]);
  const Shape* k = rank4(m, scores.key.value);
  if (repeated_k == nullptr || k == nullptr ||
      !heads_agree(m, scores.q, (*repeated_k)[1], repeated_v) ||
      (scores.key.past == kNoValue) != (value.past == kNoValue) ||
      m.dtype(scores.key.value) != m.dtype(scores.q)) {
    return std::nullopt;
  }
  return *k;
}

// Where Q's and the keys' lengths are read from, for the causal mask.
AttentionLengths attention_lengths(const Matcher& m, const Node& out_mm,
                                   const Scores& scores, const Source& value) {
  AttentionLengths lengths;
  lengths.queries = {m.node(scores.matmul).inputs[0], scores.q};
  if (scores.bert_x != kNoValue) {
    // K^T came as one Transpose(x, 0,2,3,1) of the (B,T,H,d) x: the keys'
    // length is read from the exporter's Transpose(x, 0,2,1,3), K itself.
    for (int reader : m.uses().consumers[scores.bert_x]) {
      const Node& node = m.node(reader);
      const Attribute* perm = node.attr("perm");
      if (node.op == "Transpose" && node.domain.empty() && perm != nullptr &&
          perm->type() == AttrType::kInts &&
          perm->as_ints() == std::vector<int64_t>{0, 2, 1, 3}) {
        lengths.keys.push_back(node.outputs[0]);
      }
    }
    lengths.keys.push_back(value.value);
    lengths.query_len = (*rank4(m, scores.q))[2];
    lengths.new_key_len = (*rank4(m, scores.bert_x))[1];
    return lengths;
  }
  lengths.keys = {scores.k_full, out_mm.inputs[1]};
  for (ValueId present : {scores.key.present, value.present}) {
    if (present != kNoValue) lengths.keys.push_back(present);
  }
  if (scores.key.past == kNoValue) {
    lengths.keys.push_back(scores.key.value);
    lengths.keys.push_back(value.value);
  }
  lengths.query_len = (*rank4(m, scores.q))[2];
  lengths.new_key_len = (*rank4(m, scores.key.value))[2];
  return lengths;
}

Node attention_node(const Node& out_mm, const Scores& scores,
                    const Source& value, ValueId mask, bool causal) {
  Node fused;
  fused.name = out_mm.name;
  fused.op = "Attention";
  fused.domain = kSeqrtDomain;
  fused.inputs = {scores.q, scores.key.value, value.value, mask};
  fused.outputs = {out_mm.outputs[0]};
  if (value.past != kNoValue) {
    fused.inputs.push_back(scores.key.past);
    fused.inputs.push_back(value.past);
    fused.outputs = {out_mm.outputs[0], scores.key.present, value.present};
  }
  while (fused.inputs.back() == kNoValue) fused.inputs.pop_back();
  fused.attrs = {{"scale", Attribute(static_cast<float>(scores.scale))}};
  if (causal) fused.attrs["is_causal"] = Attribute(int64_t{1});
  return fused;
}

// Y's shape to check: the inferred one; or, under a causal mask, which
// leaves P with S's shape where inference may not have followed it through
// the Where, (B,H,Tq) of Q and dv of V.
std::optional<Shape> output_shape(const Matcher& m, ValueId q, ValueId v,
                                  ValueId y, bool causal) {
  const Shape* qs = rank4(m, q);
  const Shape* vs = rank4(m, v);
  const Shape* ys = rank4(m, y);
  if (!causal) return ys != nullptr ? std::optional<Shape>(*ys) : std::nullopt;
  if (qs == nullptr || vs == nullptr) return std::nullopt;
  return Shape({(*qs)[0], (*qs)[1], (*qs)[2], (*vs)[3]});
}

std::optional<Fusion> match_attention(const Matcher& m, int n) {
  if (!is_op(m, n, "MatMul")) return std::nullopt;
  const Node& out_mm = m.node(n);
  Fusion fusion;
  fusion.remove = {n};
  int softmax_n = match_softmax(m, out_mm.inputs[0], fusion.remove);
  if (softmax_n < 0) return std::nullopt;
  Masking masking = strip_mask(m, m.node(softmax_n).inputs[0], fusion.remove);
  std::optional<Scores> scores = match_scores(m, masking.scores, fusion.remove);
  ValueId repeated_v = out_mm.inputs[1];
  if (!scores || rank4(m, repeated_v) == nullptr ||
      rank4(m, scores->q) == nullptr) {
    return std::nullopt;
  }
  Source value = strip_source(m, repeated_v, fusion.remove);
  std::optional<Shape> k = key_shape(m, *scores, value, repeated_v);
  if (!k) return std::nullopt;
  const bool causal =
      masking.fill != kNoValue &&
      is_end_aligned_causal_mask(m, masking.mask,
                                 attention_lengths(m, out_mm, *scores, value));
  if (masking.shape_unproven && !causal) return std::nullopt;
  if (causal) masking = {masking.scores};
  ValueId y = out_mm.outputs[0];
  std::optional<Shape> ys = output_shape(m, scores->q, value.value, y, causal);
  if (!ys || !shapes_agree(m, scores->q, *k, value.value, *ys)) {
    return std::nullopt;
  }
  std::set<ValueId> kept = {y, scores->key.present, value.present};
  if (!m.is_private(fusion.remove, kept)) return std::nullopt;

  // New values are made once the fusion is applied: the key of BERT's
  // layout, and the float form of a Where mask.
  Node fused = attention_node(out_mm, *scores, value, masking.mask, causal);
  std::vector<std::function<void(Graph&, std::vector<Node>&)>> makers;
  if (scores->bert_x != kNoValue) {
    Node transpose;
    transpose.name = out_mm.name + "_key";
    transpose.op = "Transpose";
    transpose.inputs = {scores->bert_x};
    transpose.attrs = {{"perm", Attribute(std::vector<int64_t>{0, 2, 1, 3})}};
    const size_t at = fusion.add.size();
    fusion.add.push_back(std::move(transpose));
    std::string base = m.graph().value(scores->bert_x).name + "_heads";
    makers.push_back([base, at](Graph& graph, std::vector<Node>& add) {
      ValueId key = add_fresh_value(graph, base);
      add[at].outputs = {key};
      add.back().inputs[1] = key;
    });
  }
  if (masking.fill != kNoValue) {
    Node to_float;
    to_float.name = out_mm.name + "_mask";
    to_float.op = "Where";
    to_float.inputs = {masking.mask, kNoValue, masking.fill};
    const size_t at = fusion.add.size();
    fusion.add.push_back(std::move(to_float));
    const DType dtype = m.dtype(masking.scores);
    std::string base = m.graph().value(masking.mask).name;
    makers.push_back([base, at, dtype](Graph& graph, std::vector<Node>& add) {
      ValueId zero = add_fresh_value(graph, base + "_visible");
      graph.constants[zero] = Tensor::allocate(dtype, {}).value();
      graph.value(zero).dtype = dtype;
      graph.value(zero).shape = Shape();
      ValueId mask = add_fresh_value(graph, base + "_float");
      add[at].inputs[1] = zero;
      add[at].outputs = {mask};
      add.back().inputs[3] = mask;
    });
  }
  if (!makers.empty()) {
    fusion.create_values = [makers](Graph& graph, std::vector<Node>& add) {
      for (const auto& make : makers) make(graph, add);
    };
  }
  fusion.add.push_back(std::move(fused));
  return fusion;
}

}  // namespace

Pass fuse_attention_pass() {
  return {"fuse_attention",
          [](Graph& graph) { return apply_fusions(graph, match_attention); }};
}

}  // namespace seqrt
