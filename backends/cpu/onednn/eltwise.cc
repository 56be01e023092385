#include "backends/cpu/onednn/eltwise.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {
namespace {

using dnnl::algorithm;

// oneDNN's algorithm with its alpha and beta.
struct EltwiseSpec {
  algorithm algo;
  float alpha = 0.0f;
  float beta = 0.0f;
};

EltwiseSpec spec_of(Eltwise kind) {
  switch (kind) {
    case Eltwise::kRelu:
      return {algorithm::eltwise_relu};
    case Eltwise::kTanh:
      return {algorithm::eltwise_tanh};
    case Eltwise::kSigmoid:
      return {algorithm::eltwise_logistic};
    case Eltwise::kExp:
      return {algorithm::eltwise_exp};
    case Eltwise::kLog:
      return {algorithm::eltwise_log};
    case Eltwise::kSqrt:
      return {algorithm::eltwise_sqrt};
    case Eltwise::kAbs:
      return {algorithm::eltwise_abs};
    case Eltwise::kGeluErf:
      return {algorithm::eltwise_gelu_erf};
    case Eltwise::kGeluTanh:
      return {algorithm::eltwise_gelu_tanh};
    case Eltwise::kSoftplus:
      return {algorithm::eltwise_soft_relu};
    case Eltwise::kNeg:
      return {algorithm::eltwise_linear, -1.0f, 0.0f};
    case Eltwise::kReciprocal:
      return {algorithm::eltwise_pow, 1.0f, -1.0f};
  }
  return {algorithm::undef};
}

}  // namespace

Result<bool> eltwise(const std::string& label, Eltwise kind, int64_t count,
                     const float* x, float* y) {
  if (count == 0) return false;
  const EltwiseSpec spec = spec_of(kind);
  std::string key = KeyBuilder("eltwise.f32")
                        .add("kind", static_cast<int64_t>(kind))
                        .add("count", count)
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key, label, "create an eltwise primitive", [&] {
        dnnl::memory::desc data = f32_desc({count});
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         spec.algo, data, spec.alpha,
                                         spec.beta);
        dnnl::eltwise_forward::primitive_desc pd(desc, user_scratchpad_attr(),
                                                 cpu_engine());
        return CachedPrimitive{
            dnnl::eltwise_forward(pd), pd.src_desc(), {}, pd.dst_desc()};
      }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run an eltwise primitive", [&] {
        return Args{{DNNL_ARG_SRC, wrap(primitive->src, x)},
                    {DNNL_ARG_DST, wrap(primitive->dst, y)}};
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
