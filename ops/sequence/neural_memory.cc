// seqrt::NeuralMemory (Titans long-term memory, OPS.md): a small MLP per
// (batch, head) trained by momentum SGD with forgetting while the sequence is
// read. The reference kernel is the token loop of OPS.md in fp64; gradients
// are taken at the anchor weights of each token's chunk.
#include "ops/sequence/neural_memory.h"

#include <algorithm>
#include <vector>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

constexpr const char* kInputNames[kNmCount] = {
    "q",     "k",  "v",  "theta",      "eta",
    "alpha", "W1", "W2", "past_state", "position"};

std::string input_label(size_t i) {
  return std::string("input '") + kInputNames[i] + "'";
}

Status check_dtypes(const Node& node, const std::vector<DType>& dtypes) {
  for (size_t i = kNmQ; i <= kNmPastState; ++i) {
    if (i >= dtypes.size() || dtypes[i] == DType::kUndefined ||
        kFloatTypes.contains(dtypes[i])) {
      continue;
    }
    return node_error(node, "{} must be {}, got {}", input_label(i),
                      kFloatTypes.to_string(), dtype_name(dtypes[i]));
  }
  if (kNmPosition < dtypes.size() && dtypes[kNmPosition] != DType::kUndefined &&
      dtypes[kNmPosition] != DType::kI64) {
    return node_error(node, "{} must be {}, got {}", input_label(kNmPosition),
                      DTypeSet{DType::kI64}.to_string(),
                      dtype_name(dtypes[kNmPosition]));
  }
  return Status::ok();
}

Status infer_neural_memory(InferContext& ctx) {
  std::vector<DType> dtypes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    dtypes.push_back(ctx.has_input(i) ? ctx.input_dtype(i) : DType::kUndefined);
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx.node(), dtypes));
  SEQRT_ASSIGN_OR_RETURN(NeuralMemoryAttrs attrs,
                         NeuralMemoryAttrs::from(ctx.node()));
  const std::optional<Shape>& q = ctx.input_shape(kNmQ);
  if (q.has_value() && q->rank() != 4) {
    return ctx.error("input 'q' must be (B,H,T,d), got {}", q->to_string());
  }
  const std::optional<Shape>& w1 = ctx.input_shape(kNmW1);
  if (w1.has_value() && w1->rank() != 3) {
    return ctx.error("input 'W1' must be (H,d,m), got {}", w1->to_string());
  }
  const int64_t depth = attrs.depth;
  if (depth == 2 && !ctx.has_input(kNmW2)) {
    return ctx.error("depth 2 needs input 'W2' (H,m,d)");
  }
  if (depth == 1 && ctx.has_input(kNmW2)) {
    return ctx.error("input 'W2' is only for depth 2; omit it for depth 1");
  }
  ctx.set_output(kNmY, ctx.input_dtype(kNmQ), q);
  if (ctx.num_outputs() > kNmPresentState) {
    std::optional<Shape> state;
    if (q.has_value()) {
      Dim params;
      if (w1.has_value() && (*w1)[1].is_fixed() && (*w1)[2].is_fixed()) {
        params = Dim(3 * depth * (*w1)[1].value() * (*w1)[2].value());
      }
      state = Shape{(*q)[0], (*q)[1], params};
    }
    ctx.set_output(kNmPresentState,
                   neural_memory_state_dtype(ctx.input_dtype(kNmQ)), state);
  }
  return Status::ok();
}

Status check_dims(const Node& node, const std::vector<int64_t>& dims, size_t i,
                  const std::vector<int64_t>& want, const std::string& form) {
  if (dims != want) {
    return node_error(node, "{} must be {} = {}, got {}", input_label(i), form,
                      dims_to_string(want), dims_to_string(dims));
  }
  return Status::ok();
}

Status check_shapes(const Node& node, const KernelInputTypes& types,
                    const std::vector<std::vector<int64_t>>& dims,
                    const NeuralMemoryDims& n) {
  auto present = [&](size_t i) { return types.dtypes[i] != DType::kUndefined; };
  std::vector<int64_t> seq4 = {n.batch, n.heads, n.seq, n.d};
  SEQRT_RETURN_IF_ERROR(check_dims(node, dims[kNmK], kNmK, seq4, "(B,H,T,d)"));
  SEQRT_RETURN_IF_ERROR(check_dims(node, dims[kNmV], kNmV, seq4, "(B,H,T,d)"));
  for (size_t i : {kNmTheta, kNmEta, kNmAlpha}) {
    SEQRT_RETURN_IF_ERROR(
        check_dims(node, dims[i], i, {n.batch, n.heads, n.seq}, "(B,H,T)"));
  }
  if (n.depth == 2) {
    SEQRT_RETURN_IF_ERROR(
        check_dims(node, dims[kNmW2], kNmW2, {n.heads, n.m, n.d}, "(H,m,d)"));
  }
  if (present(kNmPastState)) {
    SEQRT_RETURN_IF_ERROR(check_dims(node, dims[kNmPastState], kNmPastState,
                                     {n.batch, n.heads, 3 * n.params()},
                                     "(B,H,3·P)"));
  }
  if (present(kNmPosition)) {
    SEQRT_RETURN_IF_ERROR(
        check_dims(node, dims[kNmPosition], kNmPosition, {n.batch}, "(B)"));
  }
  return Status::ok();
}

// One head's memory in fp64: forward, gradient at given weights.
class ReferenceMemory {
 public:
  explicit ReferenceMemory(const NeuralMemoryDims& n)
      : n_(n), h_(n.m), a_(n.m), out_(n.d) {}

  // y = M(x) with weights `w` (W1 then W2, row-major).
  void forward(const double* w, const double* x, double* y) {
    const double* w1 = w;
    int64_t width = n_.depth == 2 ? n_.m : n_.d;
    std::fill(h_.begin(), h_.begin() + width, 0.0);
    for (int64_t i = 0; i < n_.d; ++i) {
      for (int64_t j = 0; j < width; ++j) h_[j] += x[i] * w1[i * width + j];
    }
    if (n_.depth == 1) {
      std::copy(h_.begin(), h_.begin() + n_.d, y);
      return;
    }
    const double* w2 = w + n_.d * n_.m;
    std::fill(y, y + n_.d, 0.0);
    for (int64_t j = 0; j < n_.m; ++j) {
      a_[j] = nm_activation(h_[j], n_.gelu);
      for (int64_t l = 0; l < n_.d; ++l) y[l] += a_[j] * w2[j * n_.d + l];
    }
  }

  // g = ∇ Σ_i (M(k)_i − v_i)² at weights `w`.
  void gradient(const double* w, const double* k, const double* v, double* g) {
    forward(w, k, out_.data());  // leaves h_ = k·W1 and a_ = act(h_)
    std::vector<double> r(n_.d);
    for (int64_t l = 0; l < n_.d; ++l) r[l] = 2.0 * (out_[l] - v[l]);
    if (n_.depth == 1) {
      for (int64_t i = 0; i < n_.d; ++i) {
        for (int64_t l = 0; l < n_.d; ++l) g[i * n_.d + l] = k[i] * r[l];
      }
      return;
    }
    const double* w2 = w + n_.d * n_.m;
    double* g1 = g;
    double* g2 = g + n_.d * n_.m;
    std::vector<double> dh(n_.m);
    for (int64_t j = 0; j < n_.m; ++j) {
      double back = 0.0;
      for (int64_t l = 0; l < n_.d; ++l) {
        g2[j * n_.d + l] = a_[j] * r[l];
        back += r[l] * w2[j * n_.d + l];
      }
      dh[j] = back * nm_activation_derivative(h_[j], n_.gelu);
    }
    for (int64_t i = 0; i < n_.d; ++i) {
      for (int64_t j = 0; j < n_.m; ++j) g1[i * n_.m + j] = k[i] * dh[j];
    }
  }

 private:
  const NeuralMemoryDims& n_;
  std::vector<double> h_, a_, out_;
};

Status run_neural_memory(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(NeuralMemoryDims n, check_neural_memory(ctx));
  const int64_t p_count = n.params();
  std::vector<double> q = to_f64(ctx.input(kNmQ)), k = to_f64(ctx.input(kNmK)),
                      v = to_f64(ctx.input(kNmV));
  std::vector<double> theta = to_f64(ctx.input(kNmTheta)),
                      eta = to_f64(ctx.input(kNmEta)),
                      alpha = to_f64(ctx.input(kNmAlpha));
  std::vector<double> w1 = to_f64(ctx.input(kNmW1)),
                      w2 = to_f64(ctx.input(kNmW2)),
                      past = to_f64(ctx.input(kNmPastState));
  DType y_dtype = ctx.input(kNmQ)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, y_dtype, ctx.input(0)->dims()));
  std::vector<double> state(n.batch * n.heads * 3 * p_count);
  ReferenceMemory memory(n);
  std::vector<double> grad(p_count), out(n.d);
  for (int64_t b = 0; b < n.batch; ++b) {
    int64_t position =
        ctx.has_input(kNmPosition) ? ctx.input(kNmPosition)->element_i64(b) : 0;
    for (int64_t h = 0; h < n.heads; ++h) {
      int64_t row = b * n.heads + h;
      double* w = state.data() + row * 3 * p_count;
      double* s = w + p_count;
      double* anchor = s + p_count;
      if (!past.empty()) {
        std::copy_n(past.data() + row * 3 * p_count, 3 * p_count, w);
      } else {
        std::copy_n(w1.data() + h * n.d * n.m, n.d * n.m, w);
        if (n.depth == 2) {
          std::copy_n(w2.data() + h * n.m * n.d, n.m * n.d, w + n.d * n.m);
        }
        std::copy_n(w, p_count, anchor);
      }
      for (int64_t t = 0; t < n.seq; ++t) {
        int64_t token = row * n.seq + t;
        const double* qt = q.data() + token * n.d;
        if ((position + t) % n.chunk == 0) std::copy_n(w, p_count, anchor);
        if (n.retrieve_before) memory.forward(w, qt, out.data());
        memory.gradient(anchor, k.data() + token * n.d, v.data() + token * n.d,
                        grad.data());
        for (int64_t i = 0; i < p_count; ++i) {
          s[i] = eta[token] * s[i] - theta[token] * grad[i];
          w[i] = (1.0 - alpha[token]) * w[i] + s[i];
        }
        if (!n.retrieve_before) memory.forward(w, qt, out.data());
        for (int64_t l = 0; l < n.d; ++l) {
          y->set_element_f64(token * n.d + l, out[l]);
        }
      }
    }
  }
  if (ctx.num_outputs() > 1) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * present,
        ctx.allocate_output(1, neural_memory_state_dtype(y_dtype),
                            {n.batch, n.heads, 3 * p_count}));
    for (size_t i = 0; i < state.size(); ++i) {
      present->set_element_f64(static_cast<int64_t>(i), state[i]);
    }
  }
  return Status::ok();
}

}  // namespace

DType neural_memory_state_dtype(DType q_dtype) {
  return q_dtype == DType::kF64 ? DType::kF64 : DType::kF32;
}

Result<NeuralMemoryDims> check_neural_memory(const Node& node,
                                             const KernelInputTypes& types) {
  SEQRT_RETURN_IF_ERROR(check_dtypes(node, types.dtypes));
  SEQRT_ASSIGN_OR_RETURN(NeuralMemoryAttrs attrs,
                         NeuralMemoryAttrs::from(node));
  SEQRT_RETURN_IF_ERROR(check_required_inputs(node, types, kInputNames, kNmW2));
  std::vector<std::vector<int64_t>> dims(kNmCount);
  for (size_t i = 0; i < kNmCount; ++i) {
    SEQRT_ASSIGN_OR_RETURN(dims[i],
                           fixed_input_dims(node, types, i, kInputNames[i]));
  }
  const std::vector<int64_t>& q = dims[kNmQ];
  if (q.size() != 4) {
    return node_error(node, "input 'q' must be (B,H,T,d), got {}",
                      dims_to_string(q));
  }
  const std::vector<int64_t>& w1 = dims[kNmW1];
  if (w1.size() != 3 || w1[0] != q[1] || w1[1] != q[3]) {
    return node_error(node, "input 'W1' must be (H,d,m) = ({},{},m), got {}",
                      q[1], q[3], dims_to_string(w1));
  }
  NeuralMemoryDims n;
  n.batch = q[0];
  n.heads = q[1];
  n.seq = q[2];
  n.d = q[3];
  n.m = w1[2];
  n.depth = static_cast<int>(attrs.depth);
  n.chunk = attrs.chunk_size;
  n.gelu = attrs.gelu;
  n.retrieve_before = attrs.retrieve_before;
  const bool has_w2 = types.dtypes[kNmW2] != DType::kUndefined;
  if (n.depth == 1) {
    if (n.m != n.d) {
      return node_error(node, "depth 1 needs m = d = {}, but W1 is {}", n.d,
                        dims_to_string(w1));
    }
    if (has_w2) {
      return node_error(node,
                        "input 'W2' is only for depth 2; omit it for depth 1");
    }
  } else if (!has_w2) {
    return node_error(node, "depth 2 needs input 'W2' (H,m,d) = ({},{},{})",
                      n.heads, n.m, n.d);
  }
  SEQRT_RETURN_IF_ERROR(check_shapes(node, types, dims, n));
  return n;
}

Result<NeuralMemoryDims> check_neural_memory(const KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(
      NeuralMemoryDims n,
      check_neural_memory(ctx.node(), kernel_input_types(ctx, kNmCount)));
  if (const Tensor* position = ctx.input(kNmPosition)) {
    for (int64_t b = 0; b < n.batch; ++b) {
      if (position->element_i64(b) < 0) {
        return ctx.error("input 'position' must be >= 0, got {} for batch {}",
                         position->element_i64(b), b);
      }
    }
  }
  return n;
}

Result<NeuralMemoryAttrs> NeuralMemoryAttrs::from(const Node& node) {
  NeuralMemoryAttrs attrs;
  if (const Attribute* a = node.attr(kDepthName)) attrs.depth = a->as_int();
  if (const Attribute* a = node.attr(kActivationName)) {
    attrs.gelu = a->as_string() == "gelu";
  }
  if (const Attribute* a = node.attr(kChunkSizeName)) {
    attrs.chunk_size = a->as_int();
  }
  if (const Attribute* a = node.attr(kRetrieveName)) {
    attrs.retrieve_before = a->as_string() == "before_update";
  }
  if (attrs.depth != 1 && attrs.depth != 2) {
    return node_error(node, "depth must be 1 or 2, got {}", attrs.depth);
  }
  if (attrs.chunk_size < 1) {
    return node_error(node, "chunk_size must be >= 1, got {}",
                      attrs.chunk_size);
  }
  return attrs;
}

std::vector<AttrSpec> NeuralMemoryAttrs::specs() {
  return {
      AttrSpec{kDepthName, AttrType::kInt, Attribute(kDepthDefault), false, {}},
      AttrSpec{kActivationName,
               AttrType::kString,
               Attribute(kActivationDefault),
               false,
               {"gelu", "silu"}},
      AttrSpec{kChunkSizeName,
               AttrType::kInt,
               Attribute(kChunkSizeDefault),
               false,
               {}},
      AttrSpec{kRetrieveName,
               AttrType::kString,
               Attribute(kRetrieveDefault),
               false,
               {"after_update", "before_update"}},
  };
}

void register_neural_memory(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "NeuralMemory";
  s.doc = "Titans long-term memory: an MLP per head trained while reading";
  for (size_t i = 0; i < kNmCount; ++i) {
    s.inputs.push_back({kInputNames[i], i >= kNmW2});
  }
  s.outputs = {{"y"}, {"present_state", true}};
  s.attrs = NeuralMemoryAttrs::specs();
  s.infer = infer_neural_memory;
  s.reference = run_neural_memory;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
