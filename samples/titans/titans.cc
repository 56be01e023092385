// Builds the Titans sample blocks (see README.md for the wiring).
#include "samples/titans/titans.h"

#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::titans {
namespace {

// Weights from mt19937's raw output (fixed by the C++ standard), so a seed
// gives the same graph with every standard library.
class Init {
 public:
  explicit Init(uint32_t seed) : rng_(seed) {}
  Tensor uniform(std::vector<int64_t> dims, double bound) {
    int64_t count = 1;
    for (int64_t dim : dims) count *= dim;
    std::vector<float> values(count);
    for (float& value : values) {
      double u = (rng_() >> 8) * (1.0 / (1u << 24));
      value = static_cast<float>(bound * (2.0 * u - 1.0));
    }
    return Tensor::from_vector<float>(std::move(dims), values);
  }

 private:
  std::mt19937 rng_;
};

Tensor full(std::vector<int64_t> dims, float value) {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return Tensor::from_vector<float>(std::move(dims),
                                    std::vector<float>(count, value));
}

Tensor ints(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

NodeOptions named(const std::string& name,
                  const std::string& domain = kOnnxDomain) {
  NodeOptions options;
  options.name = name;
  options.domain = domain;
  return options;
}

class Block {
 public:
  Block(GraphBuilder& b, Init& init) : b_(b), init_(init) {}

  // x (B,L,in) @ W (in,out), W ~ U(±1/sqrt(in)).
  ValueId linear(ValueId x, int64_t in, int64_t out, const std::string& name) {
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    ValueId w = b_.constant(name + ".weight", init_.uniform({in, out}, bound));
    return b_.add("MatMul", {x, w}, {}, named(name));
  }
  // (B,L,D) → (B,H,L,d).
  ValueId split_heads(ValueId x, int64_t len, const std::string& name) {
    ValueId shape =
        b_.constant(name + ".shape", ints({kBatch, len, kHeads, kHeadDim}));
    ValueId r = b_.add("Reshape", {x, shape}, {}, named(name + ".reshape"));
    return b_.add("Transpose", {r},
                  {{"perm", std::vector<int64_t>{0, 2, 1, 3}}},
                  named(name + ".transpose"));
  }
  // (B,H,L,d) → (B,L,D).
  ValueId merge_heads(ValueId x, int64_t len, const std::string& name) {
    ValueId t =
        b_.add("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}},
               named(name + ".transpose"));
    ValueId shape = b_.constant(name + ".shape", ints({kBatch, len, kModel}));
    return b_.add("Reshape", {t, shape}, {}, named(name + ".reshape"));
  }
  // RMSNormalization over the last axis with a constant scale.
  ValueId rms_norm(ValueId x, int64_t width, float scale,
                   const std::string& name) {
    ValueId s = b_.constant(name + ".scale", full({width}, scale));
    return b_.add("RMSNormalization", {x, s}, {{"epsilon", 1e-6f}},
                  named(name));
  }
  // A per-head gate in (0, 1)·factor from x (B,L,D): (B,H,L).
  ValueId gate(ValueId x, float bias, float factor, const std::string& name) {
    ValueId logits = linear(x, kModel, kHeads, name + ".proj");
    ValueId c = b_.constant(name + ".bias", full({kHeads}, bias));
    ValueId sum = b_.add("Add", {logits, c}, {}, named(name + ".add_bias"));
    ValueId s = b_.add("Sigmoid", {sum}, {}, named(name + ".sigmoid"));
    ValueId t =
        b_.add("Transpose", {s}, {{"perm", std::vector<int64_t>{0, 2, 1}}},
               named(name + ".transpose"));
    if (factor == 1.0f) return t;
    ValueId f = b_.constant(name + ".factor", Tensor::scalar<float>(factor));
    return b_.add("Mul", {t, f}, {}, named(name + ".scaled"));
  }
  // Unit-norm query/key heads: RMS norm scaled by 1/sqrt(d) is x / |x|.
  ValueId unit_heads(ValueId x, int64_t len, const std::string& name) {
    ValueId h = split_heads(linear(x, kModel, kModel, name), len, name);
    return rms_norm(h, kHeadDim, 1.0f / std::sqrt(static_cast<float>(kHeadDim)),
                    name + ".norm");
  }

  // The memory's own weights, shared by every call of one block.
  struct MemoryWeights {
    ValueId w1, w2;
  };
  MemoryWeights memory_weights(const std::string& name) {
    MemoryWeights w;
    w.w1 = b_.constant(name + ".W1",
                       init_.uniform({kHeads, kHeadDim, kHidden},
                                     1.0 / std::sqrt(double(kHeadDim))));
    w.w2 = b_.constant(name + ".W2",
                       init_.uniform({kHeads, kHidden, kHeadDim},
                                     1.0 / std::sqrt(double(kHidden))));
    return w;
  }

  // NeuralMemory over x (B,L,D): writes (k, v) and reads q, all projected
  // from x; returns {y (B,L,D), present_state}.
  std::vector<ValueId> memory(ValueId x, int64_t len, const MemoryWeights& w,
                              ValueId past, ValueId position,
                              const std::string& name) {
    ValueId q = unit_heads(x, len, name + ".q");
    ValueId k = unit_heads(x, len, name + ".k");
    ValueId v =
        split_heads(linear(x, kModel, kModel, name + ".v"), len, name + ".v");
    ValueId theta = gate(x, 0.0f, 0.2f, name + ".theta");   // learning rate
    ValueId eta = gate(x, 2.0f, 1.0f, name + ".eta");       // momentum
    ValueId alpha = gate(x, -4.0f, 1.0f, name + ".alpha");  // forgetting
    std::vector<ValueId> out =
        b_.add_node("NeuralMemory",
                    {q, k, v, theta, eta, alpha, w.w1, w.w2, past, position},
                    {{"depth", int64_t{2}},
                     {"activation", "gelu"},
                     {"chunk_size", kChunk},
                     {"retrieve", "after_update"}},
                    2, named(name, kSeqrtDomain));
    return {merge_heads(out[0], len, name + ".y"), out[1]};
  }

  // Multi-head attention of queries from xq (B,Lq,D) over keys/values from
  // xkv (B,Lk,D), causal (bottom-right aligned), with an optional bool mask
  // and sliding window; output projected back to D.
  ValueId attention(ValueId xq, int64_t lq, ValueId xkv, int64_t lk,
                    ValueId mask, int64_t window, const std::string& name) {
    ValueId q =
        split_heads(linear(xq, kModel, kModel, name + ".q"), lq, name + ".q");
    ValueId k =
        split_heads(linear(xkv, kModel, kModel, name + ".k"), lk, name + ".k");
    ValueId v =
        split_heads(linear(xkv, kModel, kModel, name + ".v"), lk, name + ".v");
    ValueId y = b_.add("Attention", {q, k, v, mask},
                       {{"is_causal", int64_t{1}}, {"window_left", window}},
                       named(name, kSeqrtDomain));
    return linear(merge_heads(y, lq, name + ".y"), kModel, kModel,
                  name + ".out");
  }

  // The N_p persistent tokens, the same for every batch row: (B,N_p,D).
  ValueId persistent(const std::string& name) {
    Tensor p = init_.uniform({1, kPersistent, kModel}, 1.0);
    std::vector<float> rows;
    for (int64_t b = 0; b < kBatch; ++b) {
      rows.insert(rows.end(), p.data_as<float>(),
                  p.data_as<float>() + kPersistent * kModel);
    }
    return b_.constant(
        name, Tensor::from_vector<float>({kBatch, kPersistent, kModel}, rows));
  }

  ValueId slice_time(ValueId x, int64_t begin, int64_t end,
                     const std::string& name) {
    return b_.add("Slice",
                  {x, b_.constant(name + ".starts", ints({begin})),
                   b_.constant(name + ".ends", ints({end})),
                   b_.constant(name + ".axes", ints({1}))},
                  {}, named(name));
  }

  // out = x + proj(o): the block's residual.
  ValueId residual(ValueId x, ValueId o, const std::string& name) {
    ValueId p = linear(o, kModel, kModel, name + ".proj");
    return b_.add("Add", {x, p}, {}, named(name));
  }

  GraphBuilder& b() { return b_; }

 private:
  GraphBuilder& b_;
  Init& init_;
};

// A constant bool mask (rows, cols) from visible(i, j).
template <typename Fn>
Tensor bool_mask(int64_t rows, int64_t cols, Fn visible) {
  std::vector<bool> values;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) values.push_back(visible(i, j));
  }
  return Tensor::from_vector<bool>({rows, cols}, values);
}

// MAC: per segment, retrieve h = M_{prev}(q) from the memory state before
// the segment, attend causally over [persistent | h | segment], write the
// attention output into the memory and gate it with the memory's read-out.
ValueId build_mac(Block& blk, ValueId x) {
  GraphBuilder& b = blk.b();
  ValueId p = blk.persistent("mac.persistent");
  Block::MemoryWeights w = blk.memory_weights("mac.memory");
  // Query i of a segment sees every persistent token, h_j and x_j for
  // j <= i (h_j depends on x_j through its query).
  const int64_t ctx = kPersistent + 2 * kSegment;
  ValueId mask =
      b.constant("mac.mask", bool_mask(kSegment, ctx, [](int64_t i, int64_t j) {
                   if (j < kPersistent) return true;
                   return (j - kPersistent) % kSegment <= i;
                 }));
  ValueId state = kNoValue;
  std::vector<ValueId> outputs;
  for (int64_t s = 0; s * kSegment < kSeq; ++s) {
    std::string name = fmt::format("mac.seg{}", s);
    ValueId xs =
        blk.slice_time(x, s * kSegment, (s + 1) * kSegment, name + ".x");
    // Retrieval without update: M(q) = gelu(q·W1)·W2 at the current state.
    ValueId q = blk.unit_heads(xs, kSegment, name + ".retrieve_q");
    ValueId w1 = w.w1, w2 = w.w2;
    if (state != kNoValue) {
      const int64_t dm = kHeadDim * kHidden;
      w1 = b.add("Reshape",
                 {b.add("Slice",
                        {state, b.constant(name + ".w1_start", ints({0})),
                         b.constant(name + ".w1_end", ints({dm})),
                         b.constant(name + ".w1_axis", ints({2}))},
                        {}, named(name + ".w1_slice")),
                  b.constant(name + ".w1_shape",
                             ints({kBatch, kHeads, kHeadDim, kHidden}))},
                 {}, named(name + ".w1"));
      w2 = b.add("Reshape",
                 {b.add("Slice",
                        {state, b.constant(name + ".w2_start", ints({dm})),
                         b.constant(name + ".w2_end", ints({2 * dm})),
                         b.constant(name + ".w2_axis", ints({2}))},
                        {}, named(name + ".w2_slice")),
                  b.constant(name + ".w2_shape",
                             ints({kBatch, kHeads, kHidden, kHeadDim}))},
                 {}, named(name + ".w2"));
    }
    ValueId hidden = b.add("MatMul", {q, w1}, {}, named(name + ".h1"));
    ValueId act = b.add("Gelu", {hidden}, {}, named(name + ".gelu"));
    ValueId h =
        blk.merge_heads(b.add("MatMul", {act, w2}, {}, named(name + ".h2")),
                        kSegment, name + ".h");
    ValueId context = b.add("Concat", {p, h, xs}, {{"axis", int64_t{1}}},
                            named(name + ".context"));
    ValueId y =
        blk.attention(xs, kSegment, context, ctx, mask, -1, name + ".attn");
    ValueId position =
        b.constant(name + ".position",
                   Tensor::from_vector<int64_t>(
                       {kBatch}, std::vector<int64_t>(kBatch, s * kSegment)));
    std::vector<ValueId> mem =
        blk.memory(y, kSegment, w, state, position, name + ".memory");
    state = mem[1];
    ValueId g = b.add("Sigmoid", {mem[0]}, {}, named(name + ".gate"));
    outputs.push_back(b.add("Mul", {y, g}, {}, named(name + ".out")));
  }
  ValueId o =
      b.add("Concat", outputs, {{"axis", int64_t{1}}}, named("mac.concat"));
  return blk.residual(x, o, "mac.residual");
}

// MAG: x̃ = [persistent | x]; sliding-window attention over x̃ (persistent
// tokens always visible) gated elementwise by the memory's read-out of x̃.
ValueId build_mag(Block& blk, ValueId x) {
  GraphBuilder& b = blk.b();
  const int64_t len = kPersistent + kSeq;
  ValueId xt = b.add("Concat", {blk.persistent("mag.persistent"), x},
                     {{"axis", int64_t{1}}}, named("mag.with_persistent"));
  // window_left would also hide the persistent prefix, so the window of
  // SW-Attn* lives in the mask; is_causal keeps the causal part.
  ValueId mask =
      b.constant("mag.mask", bool_mask(len, len, [](int64_t i, int64_t j) {
                   return j < kPersistent || (j <= i && i - j <= kWindow);
                 }));
  ValueId y = blk.attention(xt, len, xt, len, mask, -1, "mag.attn");
  Block::MemoryWeights w = blk.memory_weights("mag.memory");
  ValueId mem = blk.memory(xt, len, w, kNoValue, kNoValue, "mag.memory")[0];
  ValueId yn = blk.rms_norm(y, kModel, 1.0f, "mag.attn_norm");
  ValueId mn = blk.rms_norm(mem, kModel, 1.0f, "mag.memory_norm");
  ValueId gated =
      b.add("Mul", {yn, b.add("Sigmoid", {mn}, {}, named("mag.gate"))}, {},
            named("mag.gated"));
  ValueId o = blk.slice_time(gated, kPersistent, len, "mag.drop_persistent");
  return blk.residual(x, o, "mag.residual");
}

// MAL: x̃ = [persistent | x]; the memory layer first, then sliding-window
// causal attention (window_left) over its output.
ValueId build_mal(Block& blk, ValueId x) {
  GraphBuilder& b = blk.b();
  const int64_t len = kPersistent + kSeq;
  ValueId xt = b.add("Concat", {blk.persistent("mal.persistent"), x},
                     {{"axis", int64_t{1}}}, named("mal.with_persistent"));
  Block::MemoryWeights w = blk.memory_weights("mal.memory");
  ValueId mem = blk.memory(xt, len, w, kNoValue, kNoValue, "mal.memory")[0];
  ValueId y = blk.attention(mem, len, mem, len, kNoValue, kWindow, "mal.attn");
  ValueId o = blk.slice_time(y, kPersistent, len, "mal.drop_persistent");
  return blk.residual(x, o, "mal.residual");
}

}  // namespace

const char* variant_name(Variant variant) {
  switch (variant) {
    case Variant::kMac:
      return "mac";
    case Variant::kMag:
      return "mag";
    case Variant::kMal:
      return "mal";
  }
  return "?";
}

Result<Graph> build_titans_block(Variant variant, uint32_t seed) {
  GraphBuilder b(std::string("titans_") + variant_name(variant));
  Init init(seed);
  Block blk(b, init);
  ValueId x = b.input("x", DType::kF32, {kBatch, kSeq, kModel});
  ValueId y = variant == Variant::kMac   ? build_mac(blk, x)
              : variant == Variant::kMag ? build_mag(blk, x)
                                         : build_mal(blk, x);
  b.output(y, "y");
  b.set_metadata("producer", "samples/titans/make_titans");
  b.set_metadata("description",
                 std::string("Titans ") + variant_name(variant) +
                     " block: seqrt::NeuralMemory + seqrt::Attention");
  b.set_metadata("seed", std::to_string(seed));
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

}  // namespace seqrt::titans
