#include "backends/cpu/onednn/reorder.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {

Result<bool> strided_copy(const std::string& label,
                          const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& src_strides,
                          const float* src, float* dst) {
  if (dims.empty() || dims.size() != src_strides.size() ||
      dims.size() > DNNL_MAX_NDIMS) {
    return false;
  }
  for (int64_t d : dims) {
    if (d == 0) return false;
  }
  std::string key = KeyBuilder("reorder.f32")
                        .add("dims", dims)
                        .add("src_strides", src_strides)
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key, label, "create a reorder primitive", [&] {
        dnnl::memory::desc from = f32_desc(dims, src_strides);
        dnnl::memory::desc to = f32_desc(dims);
        dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to,
                                         user_scratchpad_attr());
        return CachedPrimitive{dnnl::reorder(pd), from, {}, to};
      }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a reorder primitive", [&] {
        return Args{{DNNL_ARG_FROM, wrap(primitive->src, src)},
                    {DNNL_ARG_TO, wrap(primitive->dst, dst)}};
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
