#include "backends/cpu/onednn/matmul.h"

#include "backends/cpu/onednn/engine.h"

namespace seqrt::cpu::onednn {
namespace {

using dnnl::algorithm;

algorithm eltwise_algorithm(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return algorithm::eltwise_relu;
    case Activation::kGelu:
      return algorithm::eltwise_gelu_erf;
    case Activation::kGeluTanh:
      return algorithm::eltwise_gelu_tanh;
    case Activation::kSigmoid:
      return algorithm::eltwise_logistic;
    case Activation::kSilu:
      return algorithm::eltwise_swish;  // x·sigmoid(alpha·x), alpha = 1
    case Activation::kNone:
      break;
  }
  return algorithm::undef;
}

dnnl::primitive_attr make_attr(const MatmulProblem& p) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (p.alpha != 1.0f) attr.set_output_scales(0, {p.alpha});
  dnnl::post_ops ops;
  if (p.sum_scale != 0.0f) ops.append_sum(p.sum_scale);
  if (p.activation != Activation::kNone) {
    float alpha = p.activation == Activation::kSilu ? 1.0f : 0.0f;
    ops.append_eltwise(1.0f, eltwise_algorithm(p.activation), alpha, 0.0f);
  }
  attr.set_post_ops(ops);
  return attr;
}

CachedPrimitive create(const MatmulProblem& p) {
  using dnnl::memory;
  memory::desc src = f32_desc(p.src_dims, p.src_strides);
  memory::desc weights =
      p.packed_weights ? memory::desc(p.weights_dims, memory::data_type::f32,
                                      memory::format_tag::any)
                       : f32_desc(p.weights_dims, p.weights_strides);
  memory::desc dst = f32_desc(p.dst_dims);
  memory::desc bias;
  if (p.bias) {
    std::vector<int64_t> dims(p.dst_dims.size(), 1);
    dims.back() = p.dst_dims.back();
    bias = f32_desc(dims);
  }
  dnnl::matmul::desc desc(src, weights, bias, dst);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(desc, make_attr(p), cpu_engine());
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) throw;
    return CachedPrimitive{};  // the caller's fallback runs it
  }
  return CachedPrimitive{dnnl::matmul(pd), pd.src_desc(), pd.weights_desc(),
                         pd.dst_desc()};
}

}  // namespace

std::optional<Activation> parse_activation(const std::string& name) {
  if (name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_tanh") return Activation::kGeluTanh;
  if (name == "sigmoid") return Activation::kSigmoid;
  if (name == "silu") return Activation::kSilu;
  return std::nullopt;
}

std::string MatmulProblem::key() const {
  KeyBuilder key("matmul.f32");
  key.add("src", src_dims).add("src_strides", src_strides);
  key.add("wei", weights_dims).add("wei_strides", weights_strides);
  key.add("packed", int64_t{packed_weights ? 1 : 0});
  key.add("dst", dst_dims).add("bias", int64_t{bias ? 1 : 0});
  key.add("alpha", alpha).add("sum", sum_scale);
  key.add("act", static_cast<int64_t>(activation));
  return key.text();
}

Result<std::shared_ptr<const CachedPrimitive>> matmul_primitive(
    const MatmulProblem& problem, const std::string& label) {
  return primitive_cache().get(problem.key(), [&]() -> Result<CachedPrimitive> {
    CachedPrimitive made;
    SEQRT_RETURN_IF_ERROR(guarded(label, "create a matmul primitive",
                                  [&] { made = create(problem); }));
    return made;
  });
}

Status execute_matmul(const CachedPrimitive& primitive,
                      const std::string& label, const float* src,
                      const dnnl::memory& weights, const float* bias,
                      float* dst) {
  return guarded(label, "run a matmul primitive", [&] {
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, wrap(primitive.src, src)},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, wrap(primitive.dst, dst)}};
    if (bias != nullptr) {
      dnnl::memory::desc dst = primitive.dst;
      std::vector<int64_t> dims(dst.dims().size(), 1);
      dims.back() = dst.dims().back();
      args[DNNL_ARG_BIAS] = wrap(f32_desc(dims), bias);
    }
    add_thread_scratchpad(primitive.primitive, args);
    dnnl::stream& stream = thread_stream();
    primitive.primitive.execute(stream, args);
    stream.wait();
  });
}

}  // namespace seqrt::cpu::onednn
