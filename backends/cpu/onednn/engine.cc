#include "backends/cpu/onednn/engine.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace seqrt::cpu::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {

struct FreeAligned {
  void operator()(void* p) const { std::free(p); }
};

// The calling thread's scratch buffer, grown to at least `bytes`.
void* thread_scratch(size_t bytes) {
  constexpr size_t kAlign = 64;
  thread_local std::unique_ptr<void, FreeAligned> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    buffer.reset(std::aligned_alloc(kAlign, rounded));
    if (!buffer) {
      capacity = 0;
      throw dnnl::error(dnnl_out_of_memory, "cannot allocate scratchpad");
    }
    capacity = rounded;
  }
  return buffer.get();
}

}  // namespace

void add_thread_scratchpad(const dnnl::primitive& primitive,
                           std::unordered_map<int, dnnl::memory>& args) {
  const_dnnl_primitive_desc_t pd = nullptr;
  dnnl::error::wrap_c_api(
      dnnl_primitive_get_primitive_desc(primitive.get(), &pd),
      "could not get a primitive descriptor");
  const dnnl_memory_desc_t* scratch =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (scratch == nullptr) return;
  dnnl::memory::desc desc(*scratch);
  size_t bytes = desc.get_size();
  if (bytes == 0) return;
  args[DNNL_ARG_SCRATCHPAD] =
      dnnl::memory(desc, cpu_engine(), thread_scratch(bytes));
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
