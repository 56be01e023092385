#include "backends/cpu/onednn/concat.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {

Result<bool> concat(const std::string& label,
                    const std::vector<std::vector<int64_t>>& dims,
                    const std::vector<const float*>& srcs, int64_t axis,
                    float* dst) {
  if (dims.empty() || dims.size() != srcs.size() || dims[0].empty()) {
    return false;
  }
  KeyBuilder key("concat.f32");
  key.add("axis", axis);
  for (const std::vector<int64_t>& d : dims) {
    // oneDNN rejects zero-sized inputs; the own kernel skips them.
    for (int64_t extent : d) {
      if (extent == 0) return false;
    }
    key.add("src", d);
  }
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key.text(), label, "create a concat primitive", [&] {
        std::vector<dnnl::memory::desc> descs;
        for (const std::vector<int64_t>& d : dims) descs.push_back(f32_desc(d));
        std::vector<int64_t> out = dims[0];
        out[axis] = 0;
        for (const std::vector<int64_t>& d : dims) out[axis] += d[axis];
        dnnl::concat::primitive_desc pd(f32_desc(out), static_cast<int>(axis),
                                        descs, cpu_engine(),
                                        user_scratchpad_attr());
        return CachedPrimitive{dnnl::concat(pd), {}, {}, pd.dst_desc()};
      }));
  if (!primitive->available()) return false;
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a concat primitive", [&] {
        Args args{{DNNL_ARG_DST, wrap(primitive->dst, dst)}};
        for (size_t i = 0; i < srcs.size(); ++i) {
          args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] =
              wrap(f32_desc(dims[i]), srcs[i]);
        }
        return args;
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
