// The partitioner's cost step (partition.h): a device segment that sits
// between host segments and holds only light ops goes to the host, since
// copying its inputs in and its outputs out costs about what running it
// on the host does, plus a round trip to the device.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/partition/partition.h"

namespace seqrt {

// Whether the op's work grows faster than the bytes it reads (a matmul, a
// convolution, attention, a recurrence or a loop): worth a trip to the
// device. Any other op costs about one pass over its bytes, as a copy does.
bool is_heavy_op(const Node& node);

// The nodes of `partition` to move to a host target, each with why: those
// of every device segment whose inputs all come from host segments or the
// graph's inputs, whose outputs all go to host segments or the graph's
// outputs, that has a host segment next to it, holds no heavy op and no
// parameter node (shape arithmetic other device segments copy in), and
// whose nodes the first host target after its own takes.
std::map<int, std::string> light_islands(
    const Graph& graph, const std::vector<PartitionTarget>& targets,
    const Partition& partition,
    const std::function<bool(const Node&)>& is_parameter);

}  // namespace seqrt
