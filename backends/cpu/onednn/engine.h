// The oneDNN engine and streams the CPU backend's primitives run on, f32
// memory descriptors for plain row-major tensors, and the guard that turns
// oneDNN's exceptions into Status values (STYLE.md rule 6).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// The one CPU engine of the process.
const dnnl::engine& cpu_engine();

// A stream on cpu_engine() for the calling thread: runs may come from
// several threads, and a stream is not meant to be shared between them.
dnnl::stream& thread_stream();

// Attributes every primitive here is created with: the scratchpad is ours
// (scratchpad_mode::user). With oneDNN's own scratchpad a primitive holds
// one buffer, so two threads running it at once (a Session run from
// several threads) overwrite each other's scratch memory; Debian's build
// is not made for concurrent execution.
dnnl::primitive_attr user_scratchpad_attr();

// Adds to `args` the calling thread's scratch memory for `primitive`
// (created with user_scratchpad_attr()), when it needs any. The buffer is
// reused and grows to the largest need met on this thread.
void add_thread_scratchpad(const dnnl::primitive& primitive,
                           std::unordered_map<int, dnnl::memory>& args);

// f32 descriptor of `dims` with the given strides (in elements); empty
// strides: row-major.
dnnl::memory::desc f32_desc(const std::vector<int64_t>& dims,
                            std::vector<int64_t> strides = {});

// `data` seen as memory of `desc`, without a copy. oneDNN takes a mutable
// pointer even for inputs; the primitives only read their inputs.
dnnl::memory wrap(const dnnl::memory::desc& desc, const float* data);

// Runs `fn`; a dnnl::error becomes kInternal naming `label` ("[MatMul] node
// 'mm'") and `what` (the step that failed).
template <typename Fn>
Status guarded(const std::string& label, const char* what, Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const dnnl::error& e) {
    return internal_error("{}: oneDNN failed to {}: {} (status {})", label,
                          what, e.what(), static_cast<int>(e.status));
  }
  return Status::ok();
}

}  // namespace seqrt::cpu::onednn
