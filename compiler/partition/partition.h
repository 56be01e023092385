// Splitting a graph between backends (DESIGN.md §6, heterogeneous
// execution): given targets in order of preference, each node goes to the
// first whose support check takes it, and runs of nodes on one target
// become segments, each a graph of its own that one backend compiles. The
// values that cross a segment's edge are its inputs and outputs; the
// constants it reads are copied into it, so weights never cross per run.
// Backend-agnostic: a target is a name and a support check.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/admit.h"
#include "graph/graph.h"

namespace seqrt {

// The inputs of a node (by index) a target reads on the host before it
// runs it (Backend::host_inputs): parameters it records its work for.
using NodeHostInputs =
    std::function<std::vector<size_t>(const Graph&, const Node&)>;

struct PartitionTarget {
  std::string name;  // "vulkan"
  NodeSupport supports;
  bool host_memory = true;  // false: values crossing its edge are copied
  // Null: none. A node the target refuses where the graph computes such an
  // input from data is asked again with the input fed as a graph input;
  // taken then, the node stays and the nodes making the input run on a
  // host target (host parameters).
  NodeHostInputs host_inputs;
};

struct Segment {
  int target = 0;          // index into the targets
  std::vector<int> nodes;  // of the whole graph, in run order
  // The segment's nodes as a graph: its inputs are the values it reads
  // from earlier segments or the graph's inputs, its outputs the values
  // later segments or the graph's outputs read (names as in the whole
  // graph), and it holds the constants it reads.
  Graph graph;
  // The state pairs of the whole graph (indices into its state_pairs) this
  // segment keeps on its device between runs of a Stream, in the order of
  // graph.state_pairs here: a device segment that alone reads a state and
  // writes its next value (a decode step's KV cache).
  std::vector<int> held_states;
  // A run-time If or Loop alone on a host target, whose branches or body
  // hold work for a device earlier in the list: the runtime reads the
  // condition (and trip count) on the host and runs the branch taken, or
  // each iteration of the body, as a graph of its own, partitioned again,
  // so their kernels run on the device.
  bool control = false;
  // Inputs of the segment's graph (names) that its device target reads on
  // the host before running (PartitionTarget::host_inputs): parameters a
  // host segment computed from data.
  std::vector<std::string> host_parameters;
};

struct Partition {
  std::vector<std::string> targets;
  std::vector<int> node_target;     // per node of the whole graph
  std::vector<std::string> why;     // per node: why not on the first target
  std::vector<std::string> labels;  // per node: Node::label()
  std::vector<Segment> segments;    // in run order
};

// The partition of a verified, type-inferred graph. Fails when a node no
// target takes (naming it and each target's reason) or when `targets` is
// empty.
Result<Partition> partition_graph(const Graph& graph,
                                  const std::vector<PartitionTarget>& targets);

// Bytes that cross between host and device memory per run: each value a
// segment on a device target reads or writes across its edge, at these
// sizes of the symbolic dims; a value whose dims are not all known counts
// as 0 and is listed in `unknown`. A state a device segment holds
// (Segment::held_states) does not count: a Stream keeps it there.
uint64_t crossing_bytes(const Partition& partition,
                        const std::vector<PartitionTarget>& targets,
                        const std::map<std::string, int64_t>& bindings,
                        std::vector<std::string>* unknown = nullptr);

}  // namespace seqrt
