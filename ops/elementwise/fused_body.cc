#include "ops/elementwise/fused_body.h"

namespace seqrt {

Result<std::vector<int>> fused_body_nodes(const Node& fused,
                                          const Graph& body) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, body.topological_order());
  std::vector<int> producer = body.producers();
  std::vector<bool> needed(body.nodes.size(), false);
  std::vector<ValueId> stack = {body.outputs[0]};
  while (!stack.empty()) {
    ValueId id = stack.back();
    stack.pop_back();
    int n = id == kNoValue ? -1 : producer[id];
    if (n < 0 || needed[n]) continue;
    needed[n] = true;
    for (ValueId in : body.nodes[n].inputs) stack.push_back(in);
  }
  std::vector<int> result;
  for (int n : order) {
    if (needed[n]) result.push_back(n);
  }
  if (result.empty()) {
    return unsupported("{}: no body node computes the body's output",
                       fused.label());
  }
  return result;
}

}  // namespace seqrt
