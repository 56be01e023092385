// One thread for small nodes. Waking a second thread and meeting it at the
// closing barrier costs microseconds, more than a LayerNorm over one token
// or the shape arithmetic of an export takes; on a busy machine each such
// barrier may also wait a whole time slice for a preempted thread. So a
// node whose data is small runs serially, kernels and oneDNN alike (both
// read the calling thread's OpenMP thread count); large ones keep the team.
#pragma once

#include <cstddef>

#include "backends/host/interpreter.h"
#include "graph/graph.h"

namespace seqrt::cpu {

// Below this many bytes of inputs and known outputs a node runs serially:
// about what one core streams in the time a two-thread region costs idle.
inline constexpr size_t kParallelNodeBytes = 32 * 1024;
// The same when idle team threads sleep (OMP_WAIT_POLICY=passive): each
// region then wakes them through the kernel, ~80 us on the development VM
// (a 1x256 by 256x64 Gemm: 4 us on one thread, 89 us on two). A weight-
// streaming node (a decode step's GEMV, ~24 GB/s on one core) gains from
// a second thread only when half its time exceeds that wake-up: from about
// 4 MB (GPT-2 4x256 decode step, passive: 1.27 ms with 1 MiB, 0.91 ms with
// 4 MiB, 0.96 ms on one thread).
inline constexpr size_t kParallelNodeBytesPassive = 4 * 1024 * 1024;

// The threshold for `wait_policy` (OMP_WAIT_POLICY's value, or null).
size_t parallel_node_bytes_for(const char* wait_policy);
// The threshold for this process's OMP_WAIT_POLICY, read once.
size_t parallel_node_bytes();

// Wraps `node`'s kernel so that it runs on one thread when its inputs and
// the outputs whose shapes the graph fixes are smaller than
// parallel_node_bytes(); otherwise it tells the run's governor that a team node
// is next (thread_governor.h) and runs on the team. Nodes that run subgraphs
// (Loop, Scan, If, RungeKutta) always keep the team: their inputs do not say
// their work.
KernelFn with_node_threads(const Graph& graph, const Node& node,
                           KernelFn kernel);

}  // namespace seqrt::cpu
