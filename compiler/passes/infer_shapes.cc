// The inference pass: infer_graph over the whole graph, reported as a
// change when any value became more specific, so that the fusions after it
// can read every dtype and shape, symbolic dims included.
#include <vector>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

bool same_types(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype != b[i].dtype || a[i].shape != b[i].shape) return false;
  }
  return true;
}

}  // namespace

Pass infer_shapes_pass() {
  return {"infer_shapes", [](Graph& graph) -> Result<bool> {
            std::vector<Value> before = graph.values;
            SEQRT_RETURN_IF_ERROR(infer_graph(graph));
            return !same_types(before, graph.values);
          }};
}

}  // namespace seqrt
