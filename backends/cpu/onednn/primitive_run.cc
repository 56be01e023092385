#include "backends/cpu/onednn/primitive_run.h"

#include <atomic>

#include "backends/cpu/onednn/engine.h"

namespace seqrt::cpu::onednn {
namespace {

std::atomic<int64_t> executed{0};

}  // namespace

Result<std::shared_ptr<const CachedPrimitive>> cached_primitive(
    const std::string& key, const std::string& label, const char* what,
    const std::function<CachedPrimitive()>& create) {
  return primitive_cache().get(key, [&]() -> Result<CachedPrimitive> {
    CachedPrimitive made;
    SEQRT_RETURN_IF_ERROR(guarded(label, what, [&] {
      try {
        made = create();
      } catch (const dnnl::error& e) {
        if (e.status != dnnl_unimplemented) throw;
        made = CachedPrimitive{};  // the caller's own kernel runs it
      }
    }));
    return made;
  });
}

Status execute(const CachedPrimitive& primitive, const std::string& label,
               const char* what, const std::function<Args()>& args) {
  return guarded(label, what, [&] {
    dnnl::stream& stream = thread_stream();
    Args run_args = args();
    add_thread_scratchpad(primitive.primitive, run_args);
    primitive.primitive.execute(stream, run_args);
    stream.wait();
    executed.fetch_add(1, std::memory_order_relaxed);
  });
}

int64_t execute_count() { return executed.load(std::memory_order_relaxed); }

}  // namespace seqrt::cpu::onednn
