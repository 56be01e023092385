// Recognises one LSTM or GRU cell step written as a Scan body, over a scan
// input x_t (Bt,I) (or (I) without a batch axis) and states of (Bt,H):
//   LSTM  C' = σ(f)·C + σ(i)·tanh(g)        H' = σ(o)·tanh(C')
//   GRU   n = tanh(x·Wnᵀ + bWn + σ(r)·(H·Rnᵀ + bRn))    (linear_before_reset 1)
//       or n = tanh(x·Wnᵀ + (σ(r)·H)·Rnᵀ + bRn + bWn)    (linear_before_reset
//       0)
//         H' = (1 − σ(z))·n + σ(z)·H   or   H' = n + σ(z)·(H − n)
// each gate's pre-activation an affine map of x and H with constant weights
// (AffineReader below: MatMul or Gemm, Add, constant biases, and the Split
// or Slices that cut one gate product into the gates). Which gate is which
// is read off where it is used, not off its position in the product, so
// any gate order (PyTorch's i, f, g, o) becomes ONNX's i, o, f, c (z, r, h).
// The Scan becomes an ONNX LSTM / GRU node (one direction, hidden_size H)
// with Unsqueeze/Squeeze for its direction axis (and the batch axis when
// the body has none); the scan output, if any, must be H'.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// rows outputs of v[…, j] = Σ_k x[…, k]·w[j, k] + Σ_k s[…, k]·r[j, k] + b[j]
// for the step's input x and one other source s.
struct Affine {
  int64_t rows = 0;
  std::vector<float> w, r, b;  // rows×I, rows×H, rows
  ValueId other = kNoValue;    // s; kNoValue when no r term was read
  bool has_x = false;

  Affine() = default;
  Affine(int64_t rows, int64_t in, int64_t hidden)
      : rows(rows),
        w(static_cast<size_t>(rows * in)),
        r(static_cast<size_t>(rows * hidden)),
        b(static_cast<size_t>(rows)) {}
};

// What a cell's states and input look like: (batch, H) and (batch, I), or
// without the batch axis when batch is 0.
struct CellSizes {
  int64_t batch = 0, in = 0, hidden = 0;
  std::vector<int64_t> rows(int64_t n) const {
    return with_batch_dim(batch, {n});
  }
};

class AffineReader {
 public:
  AffineReader(const ScanSite& site, const ProductReader& r, ValueId x,
               const CellSizes& sizes)
      : site_(site),
        r_(r),
        x_(x),
        sizes_(sizes),
        producers_(site.body.producers()) {}

  std::optional<Affine> read(ValueId v) const { return read(v, 0); }

  // A constant's value: of the body, captured, or a Constant node's.
  const Tensor* constant(ValueId v) const {
    if (const Tensor* t = body_constant(site_, v)) return t;
    const Node* node = r_.producer(v, "Constant");
    const Attribute* value = node ? node->attr("value") : nullptr;
    return value != nullptr && value->type() == AttrType::kTensor
               ? &value->as_tensor()
               : nullptr;
  }

 private:
  static constexpr int kMaxDepth = 16;

  // Memoised: a body may read one value from many places (Add(a, a)
  // nested: 2^depth paths), each read once.
  std::optional<Affine> read(ValueId v, int depth) const {
    if (depth > kMaxDepth) return std::nullopt;
    auto known = memo_.find(v);
    if (known != memo_.end()) return known->second;
    std::optional<Affine> a = read_uncached(v, depth);
    memo_.emplace(v, a);
    return a;
  }

  std::optional<Affine> read_uncached(ValueId v, int depth) const {
    if (const Tensor* t = constant(v)) return bias(*t);
    std::optional<std::vector<int64_t>> dims = r_.dims(v);
    if (!dims || dims->empty() || *dims != sizes_.rows(dims->back()) ||
        producers_[v] < 0) {
      return std::nullopt;
    }
    const Node& node = site_.body.nodes[producers_[v]];
    if (!node.domain.empty()) return std::nullopt;
    const int64_t n = dims->back();
    if (node.op == "Identity") return read(node.inputs[0], depth + 1);
    if (node.op == "Add" && node.inputs.size() == 2) {
      std::optional<Affine> a = read(node.inputs[0], depth + 1);
      std::optional<Affine> b = read(node.inputs[1], depth + 1);
      return a && b ? sum(std::move(*a), *b, n) : std::nullopt;
    }
    if (node.op == "MatMul" && node.inputs.size() == 2) {
      return product(node.inputs[0], node.inputs[1], false, n);
    }
    if (node.op == "Gemm") return gemm(node, n, depth);
    if (node.op == "Split" || node.op == "Slice") {
      int64_t offset = 0;
      if (!cut_offset(node, v, n, offset)) return std::nullopt;
      std::optional<Affine> whole = read(node.inputs[0], depth + 1);
      return whole ? rows_of(*whole, offset, n) : std::nullopt;
    }
    return std::nullopt;
  }

  // A constant broadcast along the last axis only.
  std::optional<Affine> bias(const Tensor& t) const {
    if (t.rank() == 0) return std::nullopt;
    const int64_t n = t.dim(t.rank() - 1);
    if (t.num_elements() != n) return std::nullopt;
    Affine a(n, sizes_.in, sizes_.hidden);
    for (int64_t j = 0; j < n; ++j)
      a.b[j] = static_cast<float>(t.element_f64(j));
    return a;
  }

  std::optional<Affine> sum(Affine a, const Affine& b, int64_t n) const {
    if (a.rows != n || b.rows != n ||
        (a.other != kNoValue && b.other != kNoValue && a.other != b.other)) {
      return std::nullopt;
    }
    if (a.other == kNoValue) a.other = b.other;
    a.has_x = a.has_x || b.has_x;
    for (size_t i = 0; i < a.w.size(); ++i) a.w[i] += b.w[i];
    for (size_t i = 0; i < a.r.size(); ++i) a.r[i] += b.r[i];
    for (size_t i = 0; i < a.b.size(); ++i) a.b[i] += b.b[i];
    return a;
  }

  // source·W (W (K,n)), or source·Wᵀ (W (n,K)) when `transposed`.
  std::optional<Affine> product(ValueId source, ValueId weight, bool transposed,
                                int64_t n) const {
    const Tensor* w = constant(weight);
    if (w == nullptr || w->rank() != 2) return std::nullopt;
    const int64_t k = w->dim(transposed ? 1 : 0);
    if (w->dim(transposed ? 0 : 1) != n) return std::nullopt;
    const bool is_x = source == x_;
    if (k != (is_x ? sizes_.in : sizes_.hidden) ||
        r_.dims(source) != sizes_.rows(k)) {
      return std::nullopt;
    }
    Affine a(n, sizes_.in, sizes_.hidden);
    std::vector<float>& to = is_x ? a.w : a.r;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < k; ++i) {
        to[j * k + i] = static_cast<float>(
            w->element_f64(transposed ? j * k + i : i * n + j));
      }
    }
    if (is_x) {
      a.has_x = true;
    } else {
      a.other = source;
    }
    return a;
  }

  std::optional<Affine> gemm(const Node& node, int64_t n, int depth) const {
    auto attr = [&](const char* name, double fallback) {
      const Attribute* a = node.attr(name);
      if (a == nullptr) return fallback;
      if (a->type() == AttrType::kInt) return static_cast<double>(a->as_int());
      return a->type() == AttrType::kFloat ? static_cast<double>(a->as_float())
                                           : std::nan("");
    };
    if (node.inputs.size() < 2 || attr("alpha", 1) != 1 ||
        attr("beta", 1) != 1 || attr("transA", 0) != 0) {
      return std::nullopt;
    }
    std::optional<Affine> a =
        product(node.inputs[0], node.inputs[1], attr("transB", 0) != 0, n);
    if (!a || node.inputs.size() < 3 || node.inputs[2] == kNoValue) return a;
    std::optional<Affine> c = read(node.inputs[2], depth + 1);
    return c ? sum(std::move(*a), *c, n) : std::nullopt;
  }

  // Where output `v` of a Split or Slice over the last axis starts.
  bool cut_offset(const Node& node, ValueId v, int64_t n,
                  int64_t& offset) const {
    std::optional<std::vector<int64_t>> in = r_.dims(node.inputs[0]);
    if (!in || in->empty()) return false;
    const int64_t rank = static_cast<int64_t>(in->size());
    const int64_t width = in->back();
    auto last_axis = [&](int64_t axis) {
      return axis == rank - 1 || axis == -1;
    };
    if (node.op == "Split") {
      const Attribute* axis = node.attr("axis");
      if ((axis != nullptr && axis->type() != AttrType::kInt) ||
          !last_axis(axis ? axis->as_int() : 0)) {
        return false;
      }
      std::optional<std::vector<int64_t>> sizes;
      if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
        sizes = r_.ints(node.inputs[1]);
      } else if (const Attribute* split = node.attr("split")) {
        if (split->type() != AttrType::kInts) return false;
        sizes = split->as_ints();
      } else {
        // Equal parts.
        const int64_t parts = static_cast<int64_t>(node.outputs.size());
        if (width % parts != 0) return false;
        sizes = std::vector<int64_t>(node.outputs.size(), width / parts);
      }
      if (!sizes || sizes->size() != node.outputs.size()) return false;
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        if (node.outputs[o] == v) {
          return (*sizes)[o] == n && offset >= 0 && offset + n <= width;
        }
        offset += (*sizes)[o];
      }
      return false;
    }
    if (node.inputs.size() < 4 || node.inputs[3] == kNoValue) return false;
    std::optional<std::vector<int64_t>> starts = r_.ints(node.inputs[1]);
    std::optional<std::vector<int64_t>> axes = r_.ints(node.inputs[3]);
    std::optional<std::vector<int64_t>> steps =
        node.inputs.size() > 4 && node.inputs[4] != kNoValue
            ? r_.ints(node.inputs[4])
            : std::vector<int64_t>{1};
    if (!starts || !axes || !steps || starts->size() != 1 ||
        axes->size() != 1 || *steps != std::vector<int64_t>{1} ||
        !last_axis((*axes)[0])) {
      return false;
    }
    offset = (*starts)[0] < 0 ? (*starts)[0] + width : (*starts)[0];
    return offset >= 0 && offset + n <= width;
  }

  std::optional<Affine> rows_of(const Affine& whole, int64_t offset,
                                int64_t n) const {
    Affine a(n, sizes_.in, sizes_.hidden);
    a.other = whole.other;
    a.has_x = whole.has_x;
    const int64_t in = sizes_.in, hidden = sizes_.hidden;
    std::copy_n(whole.w.begin() + offset * in, n * in, a.w.begin());
    std::copy_n(whole.r.begin() + offset * hidden, n * hidden, a.r.begin());
    std::copy_n(whole.b.begin() + offset, n, a.b.begin());
    return a;
  }

  const ScanSite& site_;
  const ProductReader& r_;
  const ValueId x_;
  const CellSizes sizes_;
  std::vector<int> producers_;
  mutable std::map<ValueId, std::optional<Affine>> memo_;
};

// The input of `v`'s producer when that is the ONNX `op`.
std::optional<ValueId> input_of(const ProductReader& r, ValueId v,
                                const char* op) {
  const Node* node = r.producer(v, op);
  if (node == nullptr || node->inputs.empty()) return std::nullopt;
  return node->inputs[0];
}

// The operands (a, b) of `v`'s binary `op` for which `match(a, b)` holds,
// tried in both orders.
bool operands(const ProductReader& r, ValueId v, const char* op,
              const std::function<bool(ValueId, ValueId)>& match) {
  const Node* node = r.producer(v, op);
  if (node == nullptr || node->inputs.size() != 2) return false;
  return match(node->inputs[0], node->inputs[1]) ||
         match(node->inputs[1], node->inputs[0]);
}

// A gate's pre-activation as an affine map of x and the state h (the only
// other source it may read).
std::optional<Affine> gate(const AffineReader& reader, ValueId pre, ValueId h,
                           int64_t hidden) {
  std::optional<Affine> a = reader.read(pre);
  if (!a || a->rows != hidden || (a->other != kNoValue && a->other != h)) {
    return std::nullopt;
  }
  return a;
}

// The body's sizes when its inputs are `num_states` states of one shape
// then one scan input, and its outputs the new states, then at most one
// scan output; nullopt otherwise.
std::optional<CellSizes> cell_sizes(const ScanSite& site,
                                    const ProductReader& r, size_t num_states) {
  const Graph& body = site.body;
  if (site.num_states != num_states || body.inputs.size() != num_states + 1 ||
      body.outputs.size() < num_states ||
      body.outputs.size() > num_states + 1) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> state = r.dims(body.inputs[0]);
  std::optional<std::vector<int64_t>> x = r.dims(body.inputs.back());
  if (!state || !x || state->empty() || state->size() > 2 ||
      x->size() != state->size() ||
      (state->size() == 2 && (*x)[0] != (*state)[0])) {
    return std::nullopt;
  }
  for (size_t i = 0; i < num_states; ++i) {
    if (r.dims(body.inputs[i]) != state || r.dims(body.outputs[i]) != state) {
      return std::nullopt;
    }
  }
  CellSizes sizes;
  sizes.batch = state->size() == 2 ? (*state)[0] : 0;
  sizes.hidden = state->back();
  sizes.in = x->back();
  return sizes;
}

// ---- LSTM ----

struct LstmRoles {
  int h = -1, c = -1;           // state indices
  std::array<Affine, 4> gates;  // ONNX order i, o, f, c
  CellSizes sizes;
};

std::optional<LstmRoles> match_lstm(const ScanSite& site,
                                    const ProductReader& r,
                                    const CellSizes& sizes, int h_index) {
  const Graph& body = site.body;
  const int c_index = 1 - h_index;
  const ValueId h_prev = body.inputs[h_index], c_prev = body.inputs[c_index];
  const ValueId c_new = r.before_views(body.outputs[c_index]);
  const ValueId h_new = r.before_views(body.outputs[h_index]);
  if (body.outputs.size() == 3 && r.before_views(body.outputs[2]) != h_new) {
    return std::nullopt;
  }
  ValueId i_pre = kNoValue, o_pre = kNoValue, f_pre = kNoValue,
          g_pre = kNoValue;
  // σ(f)·C + σ(i)·tanh(g)
  auto forget = [&](ValueId a, ValueId b) {
    std::optional<ValueId> f = input_of(r, b, "Sigmoid");
    if (a != c_prev || !f) return false;
    f_pre = *f;
    return true;
  };
  auto input = [&](ValueId a, ValueId b) {
    std::optional<ValueId> i = input_of(r, a, "Sigmoid");
    std::optional<ValueId> g = input_of(r, b, "Tanh");
    if (!i || !g) return false;
    i_pre = *i;
    g_pre = *g;
    return true;
  };
  auto cell = [&](ValueId a, ValueId b) {
    return operands(r, a, "Mul", forget) && operands(r, b, "Mul", input);
  };
  // σ(o)·tanh(C')
  auto output = [&](ValueId a, ValueId b) {
    std::optional<ValueId> o = input_of(r, a, "Sigmoid");
    std::optional<ValueId> t = input_of(r, b, "Tanh");
    if (!o || !t || r.before_views(*t) != c_new) return false;
    o_pre = *o;
    return true;
  };
  if (!operands(r, c_new, "Add", cell) || !operands(r, h_new, "Mul", output)) {
    return std::nullopt;
  }
  AffineReader reader(site, r, body.inputs.back(), sizes);
  LstmRoles roles{h_index, c_index, {}, sizes};
  const std::array<ValueId, 4> pres = {i_pre, o_pre, f_pre, g_pre};
  for (size_t k = 0; k < 4; ++k) {
    std::optional<Affine> a = gate(reader, pres[k], h_prev, sizes.hidden);
    if (!a) return std::nullopt;
    roles.gates[k] = std::move(*a);
  }
  return roles;
}

// ---- GRU ----

struct GruRoles {
  std::array<Affine, 3> gates;  // ONNX order z, r, h
  std::vector<float> rb_h;      // Rbh; zeros with linear_before_reset 0
  bool linear_before_reset = false;
  CellSizes sizes;
};

bool is_ones(const AffineReader& reader, ValueId v) {
  const Tensor* t = reader.constant(v);
  if (t == nullptr || t->num_elements() < 1) return false;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    if (t->element_f64(i) != 1.0) return false;
  }
  return true;
}

// H' = (1 − z)·n + z·H or n + z·(H − n), z = σ(·), n = tanh(·): sets the
// pre-activations of z and n.
bool match_gru_update(const ProductReader& r, const AffineReader& reader,
                      ValueId h_prev, ValueId h_new, ValueId& z_pre,
                      ValueId& n_pre) {
  auto keep = [&](ValueId z, ValueId n) {
    std::optional<ValueId> zp = input_of(r, z, "Sigmoid");
    std::optional<ValueId> np = input_of(r, n, "Tanh");
    if (!zp || !np) return false;
    z_pre = *zp;
    n_pre = *np;
    return true;
  };
  auto interpolated = [&](ValueId a, ValueId b) {
    ValueId z = kNoValue;
    auto z_h = [&](ValueId z_, ValueId h) {
      z = z_;
      return h == h_prev;
    };
    auto one_minus_z_n = [&](ValueId d, ValueId n) {
      const Node* sub = r.producer(d, "Sub");
      return sub != nullptr && sub->inputs.size() == 2 &&
             is_ones(reader, sub->inputs[0]) && sub->inputs[1] == z &&
             keep(z, n);
    };
    return operands(r, b, "Mul", z_h) && operands(r, a, "Mul", one_minus_z_n);
  };
  auto moved = [&](ValueId n, ValueId b) {
    auto z_diff = [&](ValueId z, ValueId d) {
      const Node* sub = r.producer(d, "Sub");
      return sub != nullptr && sub->inputs.size() == 2 &&
             sub->inputs[0] == h_prev && sub->inputs[1] == n && keep(z, n);
    };
    return operands(r, b, "Mul", z_diff);
  };
  return operands(r, h_new, "Add", interpolated) ||
         operands(r, h_new, "Add", moved);
}

// n's pre-activation, either form: sets the h gate, Rbh and r's
// pre-activation.
bool match_gru_candidate(const ProductReader& r, const AffineReader& reader,
                         ValueId h_prev, ValueId n_pre, GruRoles& roles,
                         ValueId& r_pre) {
  const int64_t hidden = roles.sizes.hidden;
  // x·Wnᵀ + bWn + σ(r)·(H·Rnᵀ + bRn)
  auto before_reset = [&](ValueId a, ValueId m) {
    auto reset = [&](ValueId s, ValueId hn) {
      std::optional<ValueId> rp = input_of(r, s, "Sigmoid");
      std::optional<Affine> x_part = reader.read(a);
      std::optional<Affine> h_part = reader.read(hn);
      if (!rp || !x_part || !h_part || x_part->rows != hidden ||
          x_part->other != kNoValue || h_part->rows != hidden ||
          h_part->has_x || h_part->other != h_prev) {
        return false;
      }
      r_pre = *rp;
      roles.rb_h = h_part->b;
      h_part->b.assign(h_part->b.size(), 0.0f);
      for (size_t i = 0; i < x_part->r.size(); ++i) {
        x_part->r[i] = h_part->r[i];
      }
      roles.gates[2] = std::move(*x_part);
      roles.linear_before_reset = true;
      return true;
    };
    return operands(r, m, "Mul", reset);
  };
  if (operands(r, n_pre, "Add", before_reset)) return true;
  // x·Wnᵀ + (σ(r)·H)·Rnᵀ + b
  std::optional<Affine> a = reader.read(n_pre);
  if (!a || a->rows != hidden || a->other == kNoValue) return false;
  auto reset_h = [&](ValueId s, ValueId h) {
    std::optional<ValueId> rp = input_of(r, s, "Sigmoid");
    if (!rp || h != h_prev) return false;
    r_pre = *rp;
    return true;
  };
  if (!operands(r, a->other, "Mul", reset_h)) return false;
  a->other = h_prev;
  roles.gates[2] = std::move(*a);
  roles.rb_h.assign(static_cast<size_t>(hidden), 0.0f);
  return true;
}

std::optional<GruRoles> match_gru(const ScanSite& site, const ProductReader& r,
                                  const CellSizes& sizes) {
  const Graph& body = site.body;
  const ValueId h_prev = body.inputs[0];
  const ValueId h_new = r.before_views(body.outputs[0]);
  if (body.outputs.size() == 2 && r.before_views(body.outputs[1]) != h_new) {
    return std::nullopt;
  }
  AffineReader reader(site, r, body.inputs.back(), sizes);
  ValueId z_pre = kNoValue, n_pre = kNoValue, r_pre = kNoValue;
  GruRoles roles{{}, {}, false, sizes};
  if (!match_gru_update(r, reader, h_prev, h_new, z_pre, n_pre) ||
      !match_gru_candidate(r, reader, h_prev, n_pre, roles, r_pre)) {
    return std::nullopt;
  }
  std::optional<Affine> z = gate(reader, z_pre, h_prev, sizes.hidden);
  std::optional<Affine> reset = gate(reader, r_pre, h_prev, sizes.hidden);
  if (!z || !reset) return std::nullopt;
  roles.gates[0] = std::move(*z);
  roles.gates[1] = std::move(*reset);
  return roles;
}

// ---- the replacement ----

// W (1, G·H, I), R (1, G·H, H) and B (1, 2·G·H) from the gates in ONNX
// order; `rb` the recurrence biases (G·H), zeros when empty.
std::array<Tensor, 3> rnn_weights(const std::vector<const Affine*>& gates,
                                  const CellSizes& sizes,
                                  std::vector<float> rb) {
  const int64_t g = static_cast<int64_t>(gates.size());
  std::vector<float> w, r, b;
  for (const Affine* a : gates) {
    w.insert(w.end(), a->w.begin(), a->w.end());
    r.insert(r.end(), a->r.begin(), a->r.end());
    b.insert(b.end(), a->b.begin(), a->b.end());
  }
  rb.resize(static_cast<size_t>(g * sizes.hidden), 0.0f);
  b.insert(b.end(), rb.begin(), rb.end());
  const int64_t gh = g * sizes.hidden;
  return {Tensor::from_vector<float>({1, gh, sizes.in}, w),
          Tensor::from_vector<float>({1, gh, sizes.hidden}, r),
          Tensor::from_vector<float>({1, 2 * gh}, b)};
}

ValueId unsqueezed(Graph& graph, std::vector<Node>& add, ValueId x,
                   const std::vector<int64_t>& axes, const std::string& name) {
  return add_op(graph, add, "Unsqueeze",
                {x, add_ints_constant(graph, name + "_axes", axes)}, {}, name);
}

void squeeze_into(Graph& graph, std::vector<Node>& add, ValueId x,
                  const std::vector<int64_t>& axes, ValueId output,
                  const std::string& name) {
  add_op(graph, add, "Squeeze",
         {x, add_ints_constant(graph, name + "_axes", axes)}, {}, name, output);
}

// The ONNX `op` over the Scan's x with the states' initial values
// `state_inputs` (Scan input indices, in the op's order), writing the
// Scan's final states `state_outputs` (the op's Y_h, Y_c) and its scan
// output.
void build_rnn(const std::string& op, const std::string& name,
               const CellSizes& sizes, const std::array<Tensor, 3>& weights,
               AttrMap attrs, const std::vector<int>& states, Graph& graph,
               const std::vector<ValueId>& inputs,
               const std::vector<ValueId>& outputs, std::vector<Node>& add) {
  const bool batched = sizes.batch > 0;
  // (T,Bt,I) as it is; (T,I) -> (T,1,I); states (Bt,H) -> (1,Bt,H).
  ValueId x = inputs[states.size()];
  if (!batched) x = unsqueezed(graph, add, x, {1}, name + "_x");
  std::vector<ValueId> node_inputs = {
      x, add_tensor_constant(graph, name + "_W", weights[0]),
      add_tensor_constant(graph, name + "_R", weights[1]),
      add_tensor_constant(graph, name + "_B", weights[2]), kNoValue};
  const std::vector<int64_t> state_axes =
      batched ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
  for (int s : states) {
    node_inputs.push_back(unsqueezed(graph, add, inputs[s], state_axes,
                                     fmt::format("{}_initial_{}", name, s)));
  }
  const ValueId y_out =
      outputs.size() > states.size() ? outputs[states.size()] : kNoValue;
  Node rnn{name, op, kOnnxDomain, std::move(node_inputs), {}};
  rnn.outputs.push_back(
      y_out == kNoValue ? kNoValue : add_fresh_value(graph, name + "_Y"));
  for (int s : states) {
    rnn.outputs.push_back(
        outputs[s] == kNoValue
            ? kNoValue
            : add_fresh_value(graph, fmt::format("{}_last_{}", name, s)));
  }
  attrs["hidden_size"] = Attribute(sizes.hidden);
  rnn.attrs = std::move(attrs);
  const std::vector<ValueId> written = rnn.outputs;
  add.push_back(std::move(rnn));
  // Y (T,1,Bt,H) -> (T,Bt,H); Y_h (1,Bt,H) -> (Bt,H).
  if (y_out != kNoValue) {
    squeeze_into(graph, add, written[0],
                 batched ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2},
                 y_out, name + "_y");
  }
  for (size_t k = 0; k < states.size(); ++k) {
    if (written[k + 1] == kNoValue) continue;
    squeeze_into(graph, add, written[k + 1], state_axes, outputs[states[k]],
                 fmt::format("{}_state_{}", name, states[k]));
  }
}

std::string sizes_summary(const CellSizes& sizes) {
  return fmt::format(
      "{}input {}, hidden {}",
      sizes.batch > 0 ? fmt::format("batch {}, ", sizes.batch) : std::string(),
      sizes.in, sizes.hidden);
}

ScanLift rnn_lift(const ScanSite& site, std::string op, std::string summary) {
  ScanLift lift;
  lift.op = std::move(op);
  lift.summary = std::move(summary);
  lift.fills.assign(site.scan.inputs.size(), InputFill::kNormal);
  return lift;
}

}  // namespace

std::optional<ScanLift> recognise_lstm(const ScanSite& site) {
  ProductReader r(site.body);
  std::optional<CellSizes> sizes = cell_sizes(site, r, 2);
  if (!sizes) return std::nullopt;
  std::optional<LstmRoles> roles;
  for (int h : {0, 1}) {
    roles = match_lstm(site, r, *sizes, h);
    if (roles) break;
  }
  if (!roles) return std::nullopt;
  ScanLift lift = rnn_lift(site, "LSTM", sizes_summary(*sizes));
  const std::string name = site.scan.name.empty() ? "scan" : site.scan.name;
  const std::array<Tensor, 3> weights = rnn_weights(
      {&roles->gates[0], &roles->gates[1], &roles->gates[2], &roles->gates[3]},
      *sizes, {});
  lift.build = [sizes = *sizes, states = std::vector<int>{roles->h, roles->c},
                weights, name](Graph& graph, const std::vector<ValueId>& inputs,
                               const std::vector<ValueId>& outputs,
                               std::vector<Node>& add) {
    build_rnn("LSTM", name, sizes, weights, {}, states, graph, inputs, outputs,
              add);
  };
  return lift;
}

std::optional<ScanLift> recognise_gru(const ScanSite& site) {
  ProductReader r(site.body);
  std::optional<CellSizes> sizes = cell_sizes(site, r, 1);
  if (!sizes) return std::nullopt;
  std::optional<GruRoles> roles = match_gru(site, r, *sizes);
  if (!roles) return std::nullopt;
  const int64_t lbr = roles->linear_before_reset ? 1 : 0;
  ScanLift lift = rnn_lift(
      site, "GRU",
      fmt::format("{}, linear_before_reset {}", sizes_summary(*sizes), lbr));
  const std::string name = site.scan.name.empty() ? "scan" : site.scan.name;
  std::vector<float> rb(static_cast<size_t>(2 * sizes->hidden), 0.0f);
  rb.insert(rb.end(), roles->rb_h.begin(), roles->rb_h.end());
  const std::array<Tensor, 3> weights = rnn_weights(
      {&roles->gates[0], &roles->gates[1], &roles->gates[2]}, *sizes, rb);
  lift.build = [sizes = *sizes, weights, lbr, name](
                   Graph& graph, const std::vector<ValueId>& inputs,
                   const std::vector<ValueId>& outputs,
                   std::vector<Node>& add) {
    build_rnn("GRU", name, sizes, weights,
              {{"linear_before_reset", Attribute(lbr)}}, {0}, graph, inputs,
              outputs, add);
  };
  return lift;
}

}  // namespace seqrt
