#include "backends/cpu/onednn/softmax.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {

Result<bool> softmax(const std::string& label, const std::vector<int64_t>& dims,
                     int64_t axis, bool log, const float* x, float* y) {
  // oneDNN wants at least one dim; a scalar is a line of one.
  std::vector<int64_t> shape = dims.empty() ? std::vector<int64_t>{1} : dims;
  std::string key = KeyBuilder("softmax.f32")
                        .add("dims", shape)
                        .add("axis", axis)
                        .add("log", int64_t{log ? 1 : 0})
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key, label, "create a softmax primitive", [&] {
        dnnl::memory::desc data = f32_desc(shape);
        dnnl::softmax_v2_forward::desc desc(
            dnnl::prop_kind::forward_inference,
            log ? dnnl::algorithm::softmax_log
                : dnnl::algorithm::softmax_accurate,
            data, data, static_cast<int>(axis));
        dnnl::softmax_v2_forward::primitive_desc pd(
            desc, user_scratchpad_attr(), cpu_engine());
        return CachedPrimitive{
            dnnl::softmax_v2_forward(pd), pd.src_desc(), {}, pd.dst_desc()};
      }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a softmax primitive", [&] {
        return Args{{DNNL_ARG_SRC, wrap(primitive->src, x)},
                    {DNNL_ARG_DST, wrap(primitive->dst, y)}};
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
