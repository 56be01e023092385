#include "backends/cpu/onednn/engine.h"

#include <algorithm>

namespace seqrt::cpu::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

dnnl::memory::desc f32_desc(const std::vector<int64_t>& dims,
                            std::vector<int64_t> strides) {
  if (strides.empty()) {
    strides.assign(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) {
      strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
    }
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const float* data) {
  return dnnl::memory(desc, cpu_engine(), const_cast<float*>(data));
}

}  // namespace seqrt::cpu::onednn
