// What the single-primitive kernels of this folder share (softmax, layer
// normalisation, eltwise, binary, reduction, concat, reorder, convolution):
// creation through the primitive cache, where oneDNN's "unimplemented"
// means "no primitive here, the caller runs seqrt's own kernel", and
// execution on the calling thread's stream. Every oneDNN error becomes a
// Status naming the node (guarded()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/onednn/primitive_cache.h"
#include "graph/status.h"

namespace seqrt::cpu::onednn {

using Args = std::unordered_map<int, dnnl::memory>;

// The entry for `key`, made by `create` on a miss. `create` may throw
// dnnl::error: dnnl_unimplemented caches an entry without a primitive,
// anything else is returned as an error naming `label` and `what`.
Result<std::shared_ptr<const CachedPrimitive>> cached_primitive(
    const std::string& key, const std::string& label, const char* what,
    const std::function<CachedPrimitive()>& create);

// Runs `primitive` with the memories `args` returns (built inside the
// guard: wrapping memory can throw too) and waits for it.
Status execute(const CachedPrimitive& primitive, const std::string& label,
               const char* what, const std::function<Args()>& args);

// How many primitives execute() has run in this process (tests check that
// a kernel took the oneDNN path and not its fallback).
int64_t execute_count();

}  // namespace seqrt::cpu::onednn
