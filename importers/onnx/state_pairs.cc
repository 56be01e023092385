#include "importers/onnx/state_pairs.h"

#include <algorithm>
#include <vector>

namespace seqrt {
namespace {

ValueId find_in(const Graph& graph, const std::vector<ValueId>& ids,
                const std::string& name) {
  for (ValueId id : ids) {
    if (graph.value(id).name == name) return id;
  }
  return kNoValue;
}

bool same_type(const Value& a, const Value& b) {
  return a.dtype == b.dtype && a.shape.has_value() == b.shape.has_value() &&
         (!a.shape || a.shape->rank() == b.shape->rank());
}

Status pairs_from_metadata(Graph& graph, const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    size_t colon = entry.find(':');
    if (colon == std::string::npos) {
      return invalid_model("metadata '{}': entry '{}' is not 'input:output'",
                           kStatePairsKey, entry);
    }
    std::string in_name = entry.substr(0, colon);
    std::string out_name = entry.substr(colon + 1);
    StatePair pair;
    pair.input = find_in(graph, graph.inputs, in_name);
    pair.output = find_in(graph, graph.outputs, out_name);
    if (pair.input == kNoValue || pair.output == kNoValue) {
      return invalid_model(
          "metadata '{}': '{}' must be a graph input and '{}' a graph output",
          kStatePairsKey, in_name, out_name);
    }
    graph.state_pairs.push_back(pair);
  }
  return Status::ok();
}

// The output names an input `past...` may pair with.
std::vector<std::string> present_names(const std::string& input) {
  std::vector<std::string> names;
  const std::string kv = "past_key_values";
  if (input.compare(0, kv.size(), kv) == 0) {
    names.push_back("present" + input.substr(kv.size()));
  }
  if (input.compare(0, 4, "past") == 0) {
    names.push_back("present" + input.substr(4));
  }
  return names;
}

void pairs_from_names(Graph& graph) {
  for (ValueId in : graph.inputs) {
    for (const std::string& name : present_names(graph.value(in).name)) {
      ValueId out = find_in(graph, graph.outputs, name);
      if (out == kNoValue || !same_type(graph.value(in), graph.value(out))) {
        continue;
      }
      graph.state_pairs.push_back(StatePair{in, out, std::nullopt});
      break;
    }
  }
}

}  // namespace

Status detect_state_pairs(Graph& graph) {
  graph.state_pairs.clear();
  auto it = graph.metadata.find(kStatePairsKey);
  if (it != graph.metadata.end()) return pairs_from_metadata(graph, it->second);
  pairs_from_names(graph);
  return Status::ok();
}

}  // namespace seqrt
