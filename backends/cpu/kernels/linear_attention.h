// CPU kernel of ONNX LinearAttention (opset 27). Exposed so tests (and the
// benchmark) can force a form; the registered kernel chooses by shape.
#pragma once

#include <optional>

#include "backends/cpu/kernels/chunked_state.h"
#include "ops/op_context.h"
#include "ops/sequence/linear_attention.h"

namespace seqrt::cpu {

// The form used for a problem: the chunked forms (choose_scan_form) when
// the decay is per head or absent, for all four rules (the delta rules
// through the UT transform, chunked_state.h); the token loop for a per-key
// decay, whose intra-chunk decay is not one matrix product.
ScanForm choose_linear_attention_form(const LinearAttentionProblem& p);

// Runs LinearAttention on `ctx`; `forced` overrides the automatic form and
// must be kRecurrent for a per-key decay.
Status run_linear_attention_cpu(KernelContext& ctx,
                                std::optional<ScanForm> forced = std::nullopt);

}  // namespace seqrt::cpu
