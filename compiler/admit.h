// The last step before a backend's own compile (lower/lower.h's
// lower_and_admit): every node is one the backend can run. A graph with
// nodes it cannot run gets one error that lists each of them, so a user
// sees them all at once: "the CPU backend cannot run 2 node(s): ...".
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Whether a backend can run `node` of `graph`; the error says why not.
using NodeSupport = std::function<Status(const Graph&, const Node&)>;

// Whether the nodes inside If branches and Loop/Scan/RungeKutta bodies are
// checked too: yes for backends that run subgraphs as they are, no for those
// that lower them first or check them with their parent node.
enum class Subgraphs { kSkip, kVisit };

// One line per node of `graph` that `supports` refuses, in order.
std::vector<std::string> unsupported_nodes(const Graph& graph,
                                           const NodeSupport& supports,
                                           Subgraphs subgraphs);

// kUnsupported listing every node `supports` refuses, `who` naming the
// backend ("the CPU backend"); ok when there is none.
Status require_supported(const Graph& graph, std::string_view who,
                         const NodeSupport& supports, Subgraphs subgraphs);

}  // namespace seqrt
