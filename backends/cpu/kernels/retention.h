// CPU kernel of seqrt::Retention. Exposed so tests (and the benchmark) can
// force each form; the registered kernel picks the form by shape with
// choose_scan_form (chunked_state.h).
#pragma once

#include <optional>

#include "backends/cpu/kernels/chunked_state.h"
#include "ops/op_context.h"

namespace seqrt::cpu {

// Runs Retention on `ctx`; `forced` overrides the automatic form.
Status run_retention_cpu(KernelContext& ctx,
                         std::optional<ScanForm> forced = std::nullopt);

}  // namespace seqrt::cpu
