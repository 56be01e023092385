// Pieces shared by the CPU kernels of the standard ops: which dtypes they
// compute (f32, with f16/bf16 converted at the edges), the supports() check
// that declines the others with the reason, and f32 outputs stored back in
// the node's dtype.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt::cpu {

bool is_f32_family(DType dtype);  // f32, f16 or bf16

// kUnsupported naming the first of `inputs` (indices into node.inputs;
// omitted ones are skipped) whose declared dtype is not f32/f16/bf16.
Status require_f32_family(const Graph& graph, const Node& node,
                          std::initializer_list<size_t> inputs);
// The same for every input of the node.
Status require_all_f32_family(const Graph& graph, const Node& node);

// Every input of the node present, f32/f16/bf16, and of input 0's dtype
// (elementwise kernels); kUnsupported for another dtype.
Status require_same_float_inputs(const KernelContext& ctx);

// Declared dtype of input i, kUndefined when omitted.
DType input_dtype(const Graph& graph, const Node& node, size_t i);

// The f32 tensor a kernel computes output i into (zero-filled). When the
// node's output `dtype` is f32 it is output i itself, allocated through
// ctx so that it lands in the run's planned arena; otherwise a scratch
// tensor that set_output_as converts.
Result<Tensor> f32_output(KernelContext& ctx, size_t i, DType dtype,
                          std::vector<int64_t> dims);

// Sets output i to `value` (f32) converted to `dtype`; nothing to do when
// `value` is already output i (from f32_output).
Status set_output_as(KernelContext& ctx, size_t i, const Tensor& value,
                     DType dtype);

// Splits [0, n) into chunks of at least `grain` elements and runs
// fn(begin, end) on them in parallel.
template <typename Fn>
void parallel_chunks(int64_t n, int64_t grain, Fn&& fn);

}  // namespace seqrt::cpu

#include "backends/cpu/parallel.h"

namespace seqrt::cpu {

template <typename Fn>
void parallel_chunks(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  int64_t chunks = (n + grain - 1) / grain;
  int64_t threads = max_threads();
  if (chunks > 4 * threads) chunks = 4 * threads;
  int64_t size = (n + chunks - 1) / chunks;
  parallel_for(chunks, [&](int64_t c) {
    int64_t begin = c * size;
    int64_t end = begin + size < n ? begin + size : n;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace seqrt::cpu
