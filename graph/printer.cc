#include "graph/printer.h"

#include <fmt/format.h>

namespace seqrt {
namespace {

std::string type_of(const Value& value) {
  return fmt::format("{}{}", dtype_name(value.dtype),
                     value.shape ? value.shape->to_string() : "(?)");
}

std::string typed_list(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<std::string> parts;
  for (ValueId id : ids) {
    parts.push_back(
        fmt::format("{}: {}", graph.value(id).name, type_of(graph.value(id))));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string name_list(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<std::string> parts;
  for (ValueId id : ids) {
    parts.push_back(id == kNoValue ? "_" : graph.value(id).name);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void print_into(const Graph& graph, int indent, std::string& out) {
  std::string pad(indent, ' ');
  out += fmt::format("{}graph {} ({}) -> ({})\n", pad, graph.name,
                     typed_list(graph, graph.inputs),
                     typed_list(graph, graph.outputs));
  for (ValueId id : graph.captures) {
    out += fmt::format("{}  capture {}: {}\n", pad, graph.value(id).name,
                       type_of(graph.value(id)));
  }
  for (const auto& [id, tensor] : graph.constants) {
    out +=
        fmt::format("{}  const {}: {}{}{}\n", pad, graph.value(id).name,
                    dtype_name(tensor.dtype()), dims_to_string(tensor.dims()),
                    tensor.is_view() ? " (mapped)" : "");
  }
  for (const StatePair& pair : graph.state_pairs) {
    out += fmt::format(
        "{}  state {} -> {}{}\n", pad, graph.value(pair.input).name,
        graph.value(pair.output).name, pair.initial ? " (initial value)" : "");
  }
  for (const Node& node : graph.nodes) {
    std::vector<std::string> attrs;
    for (const auto& [name, attr] : node.attrs) {
      attrs.push_back(fmt::format("{}={}", name, attr.to_string()));
    }
    std::string op =
        node.domain.empty() ? node.op : node.domain + "::" + node.op;
    out += fmt::format(
        "{}  {} = {}({}){}{}  # {}\n", pad, name_list(graph, node.outputs), op,
        name_list(graph, node.inputs), attrs.empty() ? "" : " ",
        attrs.empty() ? "" : fmt::format("{{{}}}", fmt::join(attrs, ", ")),
        node.name);
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph && attr.as_graph()) {
        print_into(*attr.as_graph(), indent + 4, out);
      }
    }
  }
}

}  // namespace

std::string print_graph(const Graph& graph) {
  std::string out;
  print_into(graph, 0, out);
  return out;
}

}  // namespace seqrt
