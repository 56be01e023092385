#include "backends/cpu/onednn/reduction.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {
namespace {

dnnl::algorithm algorithm_of(Reduction kind) {
  switch (kind) {
    case Reduction::kSum:
      return dnnl::algorithm::reduction_sum;
    case Reduction::kMean:
      return dnnl::algorithm::reduction_mean;
    case Reduction::kMax:
      return dnnl::algorithm::reduction_max;
    case Reduction::kMin:
      return dnnl::algorithm::reduction_min;
  }
  return dnnl::algorithm::undef;
}

}  // namespace

Result<bool> reduce(const std::string& label, Reduction kind,
                    const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& reduced_dims, const float* x,
                    float* y) {
  // oneDNN rejects a "reduction" over no axis; the own kernel copies.
  if (dims.empty() || dims == reduced_dims) return false;
  if (dims.size() != reduced_dims.size()) return false;
  for (int64_t d : dims) {
    if (d == 0) return false;
  }
  std::string key = KeyBuilder("reduction.f32")
                        .add("kind", static_cast<int64_t>(kind))
                        .add("src", dims)
                        .add("dst", reduced_dims)
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key, label, "create a reduction primitive", [&] {
        dnnl::reduction::desc desc(algorithm_of(kind), f32_desc(dims),
                                   f32_desc(reduced_dims), 0.0f, 0.0f);
        dnnl::reduction::primitive_desc pd(desc, user_scratchpad_attr(),
                                           cpu_engine());
        return CachedPrimitive{
            dnnl::reduction(pd), pd.src_desc(), {}, pd.dst_desc()};
      }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a reduction primitive", [&] {
        return Args{{DNNL_ARG_SRC, wrap(primitive->src, x)},
                    {DNNL_ARG_DST, wrap(primitive->dst, y)}};
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
