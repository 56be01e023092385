#include "backends/cpu/onednn/packed_weights.h"

#include <atomic>

#include "backends/cpu/onednn/engine.h"

namespace seqrt::cpu::onednn {
namespace {

std::atomic<int64_t> reorders{0};

}  // namespace

PackedWeights::PackedWeights(Tensor plain, bool transposed)
    : plain_(std::move(plain)), transposed_(transposed) {
  k_ = transposed ? plain_.dim(1) : plain_.dim(0);
  n_ = transposed ? plain_.dim(0) : plain_.dim(1);
  plain_desc_ = transposed ? f32_desc({k_, n_}, {1, k_}) : f32_desc({k_, n_});
}

PackedWeights::PackedWeights(Tensor plain, const dnnl::memory::desc& plain_desc)
    : plain_(std::move(plain)), plain_desc_(plain_desc) {}

Result<dnnl::memory> PackedWeights::in_layout(const dnnl::memory::desc& layout,
                                              const std::string& label) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (layout == plain_desc_) return wrap(plain_desc_, plain_.data_as<float>());
  for (const auto& [desc, memory] : layouts_) {
    if (desc == layout) return memory;
  }
  dnnl::memory packed;
  SEQRT_RETURN_IF_ERROR(guarded(label, "reorder the weights", [&] {
    packed = dnnl::memory(layout, cpu_engine());
    dnnl::memory source = wrap(plain_desc_, plain_.data_as<float>());
    dnnl::stream& stream = thread_stream();
    dnnl::reorder(source, packed).execute(stream, source, packed);
    stream.wait();
  }));
  layouts_.emplace_back(layout, packed);
  ++reorders;
  return packed;
}

size_t PackedWeights::num_layouts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return layouts_.size();
}

int64_t weight_reorder_count() { return reorders.load(); }

}  // namespace seqrt::cpu::onednn
