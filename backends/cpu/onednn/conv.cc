#include "backends/cpu/onednn/conv.h"

#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/primitive_run.h"

namespace seqrt::cpu::onednn {

std::vector<int64_t> conv_weights_dims(const ConvProblem& p) {
  if (p.group == 1) return p.weights_dims;
  std::vector<int64_t> dims = p.weights_dims;
  dims[0] /= p.group;
  dims.insert(dims.begin(), p.group);
  return dims;
}

std::string ConvProblem::key() const {
  KeyBuilder key("conv.f32");
  key.add("src", src_dims).add("wei", weights_dims).add("dst", dst_dims);
  key.add("group", group).add("strides", strides).add("dil", dilations);
  key.add("pad_b", pad_begin).add("pad_e", pad_end);
  key.add("bias", int64_t{bias ? 1 : 0});
  key.add("packed", int64_t{packed_weights ? 1 : 0});
  return key.text();
}

Result<std::shared_ptr<const CachedPrimitive>> conv_primitive(
    const ConvProblem& p, const std::string& label) {
  return cached_primitive(
      p.key(), label, "create a convolution primitive", [&] {
        using dnnl::memory;
        std::vector<int64_t> wdims = conv_weights_dims(p);
        memory::desc weights = p.packed_weights
                                   ? memory::desc(wdims, memory::data_type::f32,
                                                  memory::format_tag::any)
                                   : f32_desc(wdims);
        memory::desc bias;
        if (p.bias) bias = f32_desc({p.dst_dims[1]});
        // oneDNN counts dilation as the gap between taps (0: dense).
        std::vector<int64_t> gaps;
        for (int64_t d : p.dilations) gaps.push_back(d - 1);
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, f32_desc(p.src_dims), weights,
            bias, f32_desc(p.dst_dims), p.strides, gaps, p.pad_begin,
            p.pad_end);
        dnnl::convolution_forward::primitive_desc pd(
            desc, user_scratchpad_attr(), cpu_engine());
        return CachedPrimitive{dnnl::convolution_forward(pd), pd.src_desc(),
                               pd.weights_desc(), pd.dst_desc()};
      });
}

Status execute_conv(const CachedPrimitive& primitive, const std::string& label,
                    const float* src, const dnnl::memory& weights,
                    const float* bias, float* dst) {
  return execute(primitive, label, "run a convolution primitive", [&] {
    Args args{{DNNL_ARG_SRC, wrap(primitive.src, src)},
              {DNNL_ARG_WEIGHTS, weights},
              {DNNL_ARG_DST, wrap(primitive.dst, dst)}};
    if (bias != nullptr) {
      args[DNNL_ARG_BIAS] = wrap(f32_desc({primitive.dst.dims()[1]}), bias);
    }
    return args;
  });
}

}  // namespace seqrt::cpu::onednn
