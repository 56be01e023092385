#include "backends/cpu/onednn/layer_norm.h"

#include <vector>

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {

Result<bool> layer_norm(const std::string& label, int64_t rows, int64_t cols,
                        float epsilon, const float* x, const float* scale,
                        const float* shift, float* y) {
  if (rows == 0 || cols == 0) return false;  // nothing oneDNN can describe
  const bool has_shift = shift != nullptr;
  std::string key = KeyBuilder("layer_norm.f32")
                        .add("dims", std::vector<int64_t>{rows, cols})
                        .add("eps", epsilon)
                        .add("shift", int64_t{has_shift ? 1 : 0})
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(
          key, label, "create a layer normalization primitive", [&] {
            using dnnl::normalization_flags;
            normalization_flags flags = normalization_flags::use_scale;
            if (has_shift) {
              flags = flags | normalization_flags::use_shift;
            }
            dnnl::memory::desc data = f32_desc({rows, cols});
            dnnl::layer_normalization_forward::desc desc(
                dnnl::prop_kind::forward_inference, data, epsilon, flags);
            dnnl::layer_normalization_forward::primitive_desc pd(
                desc, user_scratchpad_attr(), cpu_engine());
            return CachedPrimitive{dnnl::layer_normalization_forward(pd),
                                   pd.src_desc(), pd.weights_desc(),
                                   pd.dst_desc()};
          }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a layer normalization primitive", [&] {
        dnnl::memory::desc row = f32_desc({cols});
        Args args{{DNNL_ARG_SRC, wrap(primitive->src, x)},
                  {DNNL_ARG_DST, wrap(primitive->dst, y)},
                  {DNNL_ARG_SCALE, wrap(row, scale)}};
        if (has_shift) args[DNNL_ARG_SHIFT] = wrap(row, shift);
        return args;
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
