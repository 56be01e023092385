// The in-memory model: values, nodes, constants, subgraphs and state pairs.
// Both importers produce it; passes transform it; backends compile it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace seqrt {

// Index into Graph::values. kNoValue marks an omitted optional input/output.
using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// Domains: "" is the ONNX default domain; "seqrt" holds our own ops.
inline constexpr const char* kOnnxDomain = "";
inline constexpr const char* kSeqrtDomain = "seqrt";

struct Value {
  std::string name;  // unique within its graph
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;  // nullopt: rank unknown
};

struct Node {
  std::string name;    // may be empty; printers then use the op and index
  std::string op;      // "MatMul", "SelectiveScan"
  std::string domain;  // kOnnxDomain or kSeqrtDomain
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  AttrMap attrs;

  const Attribute* attr(const std::string& attr_name) const {
    auto it = attrs.find(attr_name);
    return it == attrs.end() ? nullptr : &it->second;
  }
  // "[MatMul] node 'mm0'" — the prefix of every error about this node.
  std::string label() const;
  // Whether a graph attribute holds a subgraph (If, Loop, Scan, RungeKutta).
  bool has_subgraphs() const;
};

// A state pair (DESIGN.md §4): `input` (past_*) and `output` (present_*)
// hold the same state before and after a call. Absent `initial` means zeros.
struct StatePair {
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  std::optional<Tensor> initial;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<ValueId, Tensor> constants;  // weights and other initializers
  std::vector<StatePair> state_pairs;
  // Values this graph reads from an enclosing graph, matched by name. Only
  // subgraphs (If branches, Scan and RungeKutta bodies) have captures.
  std::vector<ValueId> captures;
  std::map<std::string, std::string> metadata;

  ValueId add_value(Value value);
  // Linear search by name; kNoValue when absent. Use value_index() in loops.
  ValueId find_value(const std::string& value_name) const;
  std::unordered_map<std::string, ValueId> value_index() const;

  const Value& value(ValueId id) const { return values[id]; }
  Value& value(ValueId id) { return values[id]; }
  bool is_constant(ValueId id) const { return constants.count(id) != 0; }
  const Tensor* constant(ValueId id) const;

  // For each value, the node that produces it (-1 for none).
  std::vector<int> producers() const;
  // Node indices in a dependency order, or an error naming a node on a cycle.
  Result<std::vector<int>> topological_order() const;
};

// Deep structural equality (names, types, attributes, constant bytes).
bool graphs_equal(const Graph& a, const Graph& b);

}  // namespace seqrt
