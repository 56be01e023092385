// A Scan run as a loop on the device instead of written out once per step
// (compiler/passes/unroll_control_flow.h): the body is planned and recorded
// once per parity into two programs, and the executable submits them
// alternately, once per step, in the same submission as the rest of the
// schedule. So the recorded commands grow with the body, not with its
// length T; only the list of command-buffer handles submitted grows with T.
//
// Per step, in the body's program: a leading barrier orders it after the
// previous step; `scan_slice` dispatches copy slice t of each scan input
// into the body's input, the body's nodes run, `scan_slice` copies each
// per-step output into slice t of the node's output, and `scan_counter`
// moves the step counter (a device word the slice copies read, so one
// recorded dispatch serves every step). Loop-carried states ping-pong
// between two buffers: the program of parity p reads buffer p and writes
// buffer 1 - p, so states are not copied per step (except a state output
// that is not made by a body node, such as a state handed on unchanged or
// a capture, which is copied into its buffer). The initial states are
// copied into buffer 0 once before the loop, the final ones out once after.
//
// Taken: forward and reverse directions along axis 0 of every scan input
// and output, 4- and 8-byte element types, a body whose nodes all have
// kernels (no nested control flow). The rest is written out as before.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/memory.h"
#include "backends/vulkan/recorder.h"
#include "compiler/planner/memory_plan.h"
#include "graph/graph.h"

namespace seqrt::vulkan {

struct DeviceContext;

// Why `node` (a Scan of `graph`) cannot run as a loop, or "" when it can,
// given that its body's nodes have kernels (the backend checks those).
std::string loop_scan_blocker(const Graph& graph, const Node& node);

// A Scan's body made ready once per executable.
struct ScanBody {
  Graph graph;  // the body alone: its captures appended to its inputs
  size_t states = 0, scan_inputs = 0, scan_outputs = 0;
  std::vector<bool> reverse_inputs, reverse_outputs;
  std::vector<ValueId> outer_captures;  // the enclosing value of each capture
  std::map<ValueId, std::unique_ptr<Allocation>> constants;  // uploaded
};

Result<std::unique_ptr<ScanBody>> make_scan_body(const DeviceContext& context,
                                                 const Graph& graph,
                                                 const Node& node);

// The Scan node's values in the enclosing plan.
struct ScanOuter {
  const Node* node = nullptr;
  std::vector<BufferSlice> inputs, outputs, captures;
  std::vector<std::vector<int64_t>> input_dims, capture_dims;
  std::map<std::string, int64_t> bindings;
};

// The body recorded over one enclosing plan's places.
struct RecordedScan {
  int64_t steps = 0;
  std::unique_ptr<Program> bodies[2];  // step t runs bodies[t % 2]
  // The bodies' error words (their node named), zeroed before the loop.
  std::vector<CommandRecorder::ErrorWord> error_words;
  BufferSlice counter;
  // Per state: the buffer step t reads is states[t % 2][i].
  std::vector<BufferSlice> states[2];
  std::vector<std::unique_ptr<Allocation>> memory;
  int body_nodes = 0;
};

Result<std::unique_ptr<RecordedScan>> record_scan(const DeviceContext& context,
                                                  const ScanBody& body,
                                                  const ScanOuter& outer);

// Before the loop, in the program that precedes it: the counter and the
// bodies' error words zeroed, the initial states copied into buffer 0.
Status record_scan_entry(const RecordedScan& scan, const ScanOuter& outer,
                         CommandRecorder& recorder);

// After the loop, in a program that starts with a barrier: the final
// states copied to the node's outputs.
Status record_scan_exit(const RecordedScan& scan, const ScanOuter& outer,
                        CommandRecorder& recorder);

}  // namespace seqrt::vulkan
