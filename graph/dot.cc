#include "graph/dot.h"

#include <fmt/format.h>

namespace seqrt {
namespace {

// DOT strings are double-quoted; backslash and quote need escaping.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string type_of(const Value& value) {
  return fmt::format("{}{}", dtype_name(value.dtype),
                     value.shape ? value.shape->to_string() : "(?)");
}

std::string op_name(const Node& node) {
  return node.domain.empty() ? node.op : node.domain + "::" + node.op;
}

// Writes one graph. `prefix` makes ids unique across nested subgraphs.
class DotWriter {
 public:
  explicit DotWriter(std::string& out) : out_(out) {}

  void write(const Graph& graph, const std::string& prefix, int depth) {
    std::string pad(2 * depth, ' ');
    std::vector<int> producers = graph.producers();
    for (ValueId id : graph.inputs) {
      declare_value(graph, id, prefix, pad, "lightblue");
    }
    for (ValueId id : graph.captures) {
      declare_value(graph, id, prefix, pad, "lightyellow");
    }
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      write_node(graph, static_cast<int>(n), prefix, pad, depth);
    }
    for (ValueId id : graph.outputs) {
      declare_value(graph, id, prefix, pad, "palegreen");
      // A graph output that is also an input or constant has no producer.
      int producer = producers[id];
      if (producer >= 0) {
        edge(node_id(prefix, producer), value_id(prefix, id),
             type_of(graph.value(id)), pad);
      }
    }
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      write_in_edges(graph, static_cast<int>(n), producers, prefix, pad);
    }
  }

 private:
  static std::string node_id(const std::string& prefix, int node) {
    return fmt::format("{}n{}", prefix, node);
  }
  static std::string value_id(const std::string& prefix, ValueId value) {
    return fmt::format("{}v{}", prefix, value);
  }

  void declare_value(const Graph& graph, ValueId id, const std::string& prefix,
                     const std::string& pad, const char* color) {
    const Value& value = graph.value(id);
    out_ += fmt::format(
        "{}  {} [shape=ellipse, style=filled, fillcolor={}, label={}];\n", pad,
        value_id(prefix, id), color,
        quoted(value.name + "\n" + type_of(value)));
  }

  void write_node(const Graph& graph, int n, const std::string& prefix,
                  const std::string& pad, int depth) {
    const Node& node = graph.nodes[n];
    std::string label = op_name(node);
    if (!node.name.empty()) label += "\n" + node.name;
    for (ValueId id : node.inputs) {
      if (id != kNoValue && graph.is_constant(id)) {
        const Tensor& tensor = *graph.constant(id);
        label += fmt::format("\n{}: {}{}", graph.value(id).name,
                             dtype_name(tensor.dtype()),
                             dims_to_string(tensor.dims()));
      }
    }
    out_ += fmt::format("{}  {} [shape=box, style=rounded, label={}];\n", pad,
                        node_id(prefix, n), quoted(label));
    int sub = 0;
    for (const auto& [attr_name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph || !attr.as_graph()) continue;
      std::string sub_prefix = fmt::format("{}n{}g{}_", prefix, n, sub++);
      out_ +=
          fmt::format("{}  subgraph cluster_{} {{\n{}    label={};\n", pad,
                      sub_prefix, pad, quoted(op_name(node) + " " + attr_name));
      write(*attr.as_graph(), sub_prefix, depth + 1);
      out_ += fmt::format("{}  }}\n", pad);
    }
  }

  void write_in_edges(const Graph& graph, int n,
                      const std::vector<int>& producers,
                      const std::string& prefix, const std::string& pad) {
    for (ValueId id : graph.nodes[n].inputs) {
      if (id == kNoValue || graph.is_constant(id)) continue;
      int producer = producers[id];
      std::string from =
          producer >= 0 ? node_id(prefix, producer) : value_id(prefix, id);
      edge(from, node_id(prefix, n), type_of(graph.value(id)), pad);
    }
  }

  void edge(const std::string& from, const std::string& to,
            const std::string& label, const std::string& pad) {
    out_ +=
        fmt::format("{}  {} -> {} [label={}];\n", pad, from, to, quoted(label));
  }

  std::string& out_;
};

}  // namespace

std::string graph_to_dot(const Graph& graph) {
  std::string out = fmt::format(
      "digraph {} {{\n  rankdir=TB;\n  node [fontname=\"Helvetica\", "
      "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
      quoted(graph.name.empty() ? "graph" : graph.name));
  DotWriter(out).write(graph, "", 0);
  return out + "}\n";
}

}  // namespace seqrt
