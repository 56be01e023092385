#include "backends/cpu/onednn/binary.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {
namespace {

dnnl::algorithm algorithm_of(Binary kind) {
  switch (kind) {
    case Binary::kAdd:
      return dnnl::algorithm::binary_add;
    case Binary::kSub:
      return dnnl::algorithm::binary_sub;
    case Binary::kMul:
      return dnnl::algorithm::binary_mul;
    case Binary::kDiv:
      return dnnl::algorithm::binary_div;
    case Binary::kMax:
      return dnnl::algorithm::binary_max;
    case Binary::kMin:
      return dnnl::algorithm::binary_min;
  }
  return dnnl::algorithm::undef;
}

// b broadcasts to `dims` the way oneDNN's second operand may.
bool broadcasts_as_second(const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& b_dims) {
  if (dims.empty() || dims.size() != b_dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return false;
    if (b_dims[i] != dims[i] && b_dims[i] != 1) return false;
  }
  return true;
}

}  // namespace

Result<bool> binary(const std::string& label, Binary kind,
                    const std::vector<int64_t>& dims, const float* a,
                    const std::vector<int64_t>& b_dims, const float* b,
                    float* dst) {
  if (!broadcasts_as_second(dims, b_dims)) return false;
  std::string key = KeyBuilder("binary.f32")
                        .add("kind", static_cast<int64_t>(kind))
                        .add("a", dims)
                        .add("b", b_dims)
                        .text();
  SEQRT_ASSIGN_OR_RETURN(
      auto primitive,
      cached_primitive(key, label, "create a binary primitive", [&] {
        dnnl::memory::desc a_desc = f32_desc(dims);
        dnnl::binary::desc desc(algorithm_of(kind), a_desc, f32_desc(b_dims),
                                a_desc);
        dnnl::binary::primitive_desc pd(desc, user_scratchpad_attr(),
                                        cpu_engine());
        return CachedPrimitive{dnnl::binary(pd), pd.src_desc(0), pd.src_desc(1),
                               pd.dst_desc()};
      }));
  if (!primitive->available()) return false;
  // The second operand's descriptor is kept in `weights`.
  SEQRT_RETURN_IF_ERROR(
      execute(*primitive, label, "run a binary primitive", [&] {
        return Args{{DNNL_ARG_SRC_0, wrap(primitive->src, a)},
                    {DNNL_ARG_SRC_1, wrap(primitive->weights, b)},
                    {DNNL_ARG_DST, wrap(primitive->dst, dst)}};
      }));
  return true;
}

}  // namespace seqrt::cpu::onednn
