#include "importers/native/deserialize.h"

#include <utility>

#include "graph/verifier.h"
#include "importers/native/schema_enums.h"

namespace seqrt {
namespace {

using flatbuffers::uoffset_t;
using flatbuffers::Vector;
using StringVector = Vector<flatbuffers::Offset<flatbuffers::String>>;

class Converter {
 public:
  Converter(const SegmentTable& segments, std::shared_ptr<const void> owner,
            uint64_t budget)
      : segments_(segments), owner_(std::move(owner)), budget_(budget) {}

  // `depth` is 0 for the main graph.
  Result<Graph> graph(const fb::Graph* source, int depth);

 private:
  Status graph_body(const fb::Graph& source, int depth, Graph& graph);
  Status add_values(const fb::Graph& source, Graph& graph);
  Status add_nodes(const fb::Graph& source, int depth, Graph& graph);
  Status add_constants(const fb::Graph& source, Graph& graph);
  Status add_state_pairs(const fb::Graph& source, Graph& graph);
  Status add_metadata(const fb::Graph& source, Graph& graph);

  Result<Value> value(const fb::Value& source,
                      const std::vector<std::string>& symbols);
  Result<Dim> dim(const fb::Dim& source, size_t index,
                  const std::vector<std::string>& symbols);
  Result<Node> node(const fb::Node& source, const Graph& graph, int depth);
  Result<Attribute> attribute(const fb::Attribute& source,
                              const std::string& what, int depth);
  Result<Tensor> tensor(const fb::Tensor* source, const std::string& what);

  Result<std::string> string(const flatbuffers::String* source);
  Result<std::vector<std::string>> strings(const StringVector* source);
  template <typename T>
  Result<std::vector<T>> scalars(const Vector<T>* source);
  Result<std::vector<ValueId>> value_ids(const Vector<int32_t>* source,
                                         const Graph& graph, bool optional,
                                         const std::string& what);
  Status charge(uint64_t units);

  const SegmentTable& segments_;
  std::shared_ptr<const void> owner_;
  // What is left of the FlatBuffer's size to spend on converted items
  // (one unit per table or vector element, one per string byte). An honest
  // buffer spends at most its size; a hostile one that points many times at
  // one shared string or vector runs out instead of exhausting memory.
  uint64_t budget_;
};

Status Converter::charge(uint64_t units) {
  if (units > budget_) {
    return invalid_model(
        "the FlatBuffer expands into more data than it holds (shared strings "
        "or vectors?)");
  }
  budget_ -= units;
  return Status::ok();
}

Result<std::string> Converter::string(const flatbuffers::String* source) {
  if (source == nullptr) return std::string();
  SEQRT_RETURN_IF_ERROR(charge(uint64_t{source->size()} + 1));
  return std::string(source->data(), source->size());
}

Result<std::vector<std::string>> Converter::strings(
    const StringVector* source) {
  std::vector<std::string> out;
  if (source == nullptr) return out;
  SEQRT_RETURN_IF_ERROR(charge(source->size()));
  out.reserve(source->size());
  for (uoffset_t i = 0; i < source->size(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(std::string text, string(source->Get(i)));
    out.push_back(std::move(text));
  }
  return out;
}

template <typename T>
Result<std::vector<T>> Converter::scalars(const Vector<T>* source) {
  std::vector<T> out;
  if (source == nullptr) return out;
  // The verifier checks only 4-byte alignment of vector contents.
  if (source->size() > 0 &&
      reinterpret_cast<uintptr_t>(source->Data()) % alignof(T) != 0) {
    return invalid_model("a vector of {}-byte numbers is misaligned",
                         sizeof(T));
  }
  SEQRT_RETURN_IF_ERROR(charge(source->size()));
  out.reserve(source->size());
  for (uoffset_t i = 0; i < source->size(); ++i) out.push_back(source->Get(i));
  return out;
}

Result<std::vector<ValueId>> Converter::value_ids(const Vector<int32_t>* source,
                                                  const Graph& graph,
                                                  bool optional,
                                                  const std::string& what) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<ValueId> ids, scalars(source));
  for (ValueId id : ids) {
    if (optional && id == kNoValue) continue;
    if (id < 0 || static_cast<size_t>(id) >= graph.values.size()) {
      return invalid_model("{} refers to value #{} but the graph has {} values",
                           what, id, graph.values.size());
    }
  }
  return ids;
}

Result<Tensor> Converter::tensor(const fb::Tensor* source,
                                 const std::string& what) {
  if (source == nullptr) return invalid_model("{} has no tensor", what);
  SEQRT_RETURN_IF_ERROR(charge(1));
  auto code = static_cast<int>(source->dtype());
  if (code <= 0 || code > static_cast<int>(kLastDType)) {
    return invalid_model(
        "{} has dtype code {}; valid codes are 1 to {} (a file from a newer "
        "seqrt may use dtypes this reader does not know)",
        what, code, static_cast<int>(kLastDType));
  }
  auto dtype = static_cast<DType>(code);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, scalars(source->dims()));
  Result<int64_t> count = checked_num_elements(dims);
  if (!count.is_ok()) {
    return invalid_model("{}: {}", what, count.status().message());
  }
  SEQRT_ASSIGN_OR_RETURN(const uint8_t* data,
                         segments_.locate(*source, dtype, dims, what));
  return Tensor::view(dtype, std::move(dims), data, owner_);
}

Result<Dim> Converter::dim(const fb::Dim& source, size_t index,
                           const std::vector<std::string>& symbols) {
  int64_t size = source.value();
  int32_t symbol = source.symbol();
  if (size >= 0 && symbol == -1) return Dim(size);
  if (size == -1 && symbol == -1) return Dim::unknown();
  if (size == -1 && symbol >= 0 &&
      static_cast<size_t>(symbol) < symbols.size()) {
    return Dim::symbol(symbols[symbol]);
  }
  return invalid_model(
      "dim {} (size {}, symbol #{}) is neither a size >= 0, "
      "nor one of the graph's {} symbols, nor unknown",
      index, size, symbol, symbols.size());
}

Result<Value> Converter::value(const fb::Value& source,
                               const std::vector<std::string>& symbols) {
  SEQRT_RETURN_IF_ERROR(charge(1));
  Value value;
  SEQRT_ASSIGN_OR_RETURN(value.name, string(source.name()));
  auto code = static_cast<int>(source.dtype());
  if (code > static_cast<int>(kLastDType)) {
    return invalid_model(
        "value '{}' has dtype code {}; valid codes are 0 to {}", value.name,
        code, static_cast<int>(kLastDType));
  }
  value.dtype = static_cast<DType>(code);
  const auto* dims = source.dims();
  if (source.unknown_rank()) {
    if (dims != nullptr && dims->size() != 0) {
      return invalid_model("value '{}' has an unknown rank but lists {} dims",
                           value.name, dims->size());
    }
    return value;
  }
  Shape shape;
  if (dims != nullptr) {
    if (dims->size() > 0 &&
        reinterpret_cast<uintptr_t>(dims->Data()) % alignof(int64_t) != 0) {
      return invalid_model("the dims of value '{}' are misaligned", value.name);
    }
    SEQRT_RETURN_IF_ERROR(charge(dims->size()));
    for (uoffset_t i = 0; i < dims->size(); ++i) {
      Result<Dim> dim_or = dim(*dims->Get(i), i, symbols);
      if (!dim_or.is_ok()) {
        return dim_or.status().with_context("value '" + value.name + "'");
      }
      shape.dims().push_back(std::move(dim_or).value());
    }
  }
  value.shape = std::move(shape);
  return value;
}

Result<Attribute> Converter::attribute(const fb::Attribute& source,
                                       const std::string& what, int depth) {
  switch (static_cast<int>(source.type())) {
    case static_cast<int>(AttrType::kInt):
      return Attribute(int64_t{source.i()});
    case static_cast<int>(AttrType::kFloat):
      return Attribute(source.f());
    case static_cast<int>(AttrType::kString): {
      SEQRT_ASSIGN_OR_RETURN(std::string text, string(source.s()));
      return Attribute(std::move(text));
    }
    case static_cast<int>(AttrType::kInts): {
      SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> ints, scalars(source.ints()));
      return Attribute(std::move(ints));
    }
    case static_cast<int>(AttrType::kFloats): {
      SEQRT_ASSIGN_OR_RETURN(std::vector<float> floats,
                             scalars(source.floats()));
      return Attribute(std::move(floats));
    }
    case static_cast<int>(AttrType::kStrings): {
      SEQRT_ASSIGN_OR_RETURN(std::vector<std::string> texts,
                             strings(source.strings()));
      return Attribute(std::move(texts));
    }
    case static_cast<int>(AttrType::kTensor): {
      SEQRT_ASSIGN_OR_RETURN(Tensor value, tensor(source.t(), what));
      return Attribute(std::move(value));
    }
    case static_cast<int>(AttrType::kGraph): {
      if (source.g() == nullptr) return invalid_model("{} has no graph", what);
      Result<Graph> body = graph(source.g(), depth + 1);
      if (!body.is_ok()) return body.status().with_context(what);
      return Attribute(std::make_shared<Graph>(std::move(body).value()));
    }
  }
  return invalid_model("{} has type code {}; valid codes are 1 to {}", what,
                       static_cast<int>(source.type()),
                       static_cast<int>(AttrType::kGraph));
}

Result<Node> Converter::node(const fb::Node& source, const Graph& graph,
                             int depth) {
  SEQRT_RETURN_IF_ERROR(charge(1));
  Node node;
  SEQRT_ASSIGN_OR_RETURN(node.name, string(source.name()));
  SEQRT_ASSIGN_OR_RETURN(node.op, string(source.op()));
  SEQRT_ASSIGN_OR_RETURN(node.domain, string(source.domain()));
  std::string label = node.label();
  SEQRT_ASSIGN_OR_RETURN(
      node.inputs, value_ids(source.inputs(), graph, true, label + " input"));
  SEQRT_ASSIGN_OR_RETURN(node.outputs, value_ids(source.outputs(), graph, true,
                                                 label + " output"));
  const auto* attrs = source.attributes();
  if (attrs == nullptr) return node;
  SEQRT_RETURN_IF_ERROR(charge(attrs->size()));
  for (uoffset_t i = 0; i < attrs->size(); ++i) {
    const fb::Attribute& attr = *attrs->Get(i);
    SEQRT_ASSIGN_OR_RETURN(std::string name, string(attr.name()));
    std::string what = label + " attribute '" + name + "'";
    SEQRT_ASSIGN_OR_RETURN(Attribute value, attribute(attr, what, depth));
    if (!node.attrs.emplace(std::move(name), std::move(value)).second) {
      return invalid_model("{} appears twice", what);
    }
  }
  return node;
}

Status Converter::add_values(const fb::Graph& source, Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<std::string> symbols,
                         strings(source.symbols()));
  for (const std::string& symbol : symbols) {
    if (symbol.empty()) return invalid_model("a dim symbol has no name");
  }
  const auto* values = source.values();
  if (values == nullptr) return Status::ok();
  SEQRT_RETURN_IF_ERROR(charge(values->size()));
  graph.values.reserve(values->size());
  for (uoffset_t i = 0; i < values->size(); ++i) {
    Result<Value> value_or = value(*values->Get(i), symbols);
    if (!value_or.is_ok()) {
      return value_or.status().with_context("value #" + std::to_string(i));
    }
    graph.values.push_back(std::move(value_or).value());
  }
  return Status::ok();
}

Status Converter::add_nodes(const fb::Graph& source, int depth, Graph& graph) {
  const auto* nodes = source.nodes();
  if (nodes == nullptr) return Status::ok();
  SEQRT_RETURN_IF_ERROR(charge(nodes->size()));
  graph.nodes.reserve(nodes->size());
  for (uoffset_t i = 0; i < nodes->size(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(Node converted, node(*nodes->Get(i), graph, depth));
    graph.nodes.push_back(std::move(converted));
  }
  return Status::ok();
}

Status Converter::add_constants(const fb::Graph& source, Graph& graph) {
  const auto* constants = source.constants();
  if (constants == nullptr) return Status::ok();
  SEQRT_RETURN_IF_ERROR(charge(constants->size()));
  for (uoffset_t i = 0; i < constants->size(); ++i) {
    const fb::Constant& constant = *constants->Get(i);
    ValueId id = constant.value();
    if (id < 0 || static_cast<size_t>(id) >= graph.values.size()) {
      return invalid_model(
          "constant #{} refers to value #{} but the graph has {} values", i, id,
          graph.values.size());
    }
    std::string what = "constant '" + graph.value(id).name + "'";
    SEQRT_ASSIGN_OR_RETURN(Tensor tensor_value,
                           tensor(constant.tensor(), what));
    if (!graph.constants.emplace(id, std::move(tensor_value)).second) {
      return invalid_model("{} is given twice", what);
    }
  }
  return Status::ok();
}

Status Converter::add_state_pairs(const fb::Graph& source, Graph& graph) {
  const auto* pairs = source.state_pairs();
  if (pairs == nullptr) return Status::ok();
  SEQRT_RETURN_IF_ERROR(charge(pairs->size()));
  for (uoffset_t i = 0; i < pairs->size(); ++i) {
    const fb::StatePair& pair = *pairs->Get(i);
    for (ValueId id : {pair.input(), pair.output()}) {
      if (id < 0 || static_cast<size_t>(id) >= graph.values.size()) {
        return invalid_model(
            "state pair #{} refers to value #{} but the graph has {} values", i,
            id, graph.values.size());
      }
    }
    StatePair state{pair.input(), pair.output(), std::nullopt};
    if (pair.initial() != nullptr) {
      std::string what =
          "the initial value of state '" + graph.value(state.input).name + "'";
      SEQRT_ASSIGN_OR_RETURN(state.initial, tensor(pair.initial(), what));
    }
    graph.state_pairs.push_back(std::move(state));
  }
  return Status::ok();
}

Status Converter::add_metadata(const fb::Graph& source, Graph& graph) {
  const auto* entries = source.metadata();
  if (entries == nullptr) return Status::ok();
  SEQRT_RETURN_IF_ERROR(charge(entries->size()));
  for (uoffset_t i = 0; i < entries->size(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(std::string key, string(entries->Get(i)->key()));
    SEQRT_ASSIGN_OR_RETURN(std::string text, string(entries->Get(i)->value()));
    if (!graph.metadata.emplace(key, std::move(text)).second) {
      return invalid_model("metadata key '{}' appears twice", key);
    }
  }
  return Status::ok();
}

Status Converter::graph_body(const fb::Graph& source, int depth, Graph& graph) {
  SEQRT_RETURN_IF_ERROR(add_values(source, graph));
  SEQRT_RETURN_IF_ERROR(add_nodes(source, depth, graph));
  SEQRT_ASSIGN_OR_RETURN(
      graph.inputs, value_ids(source.inputs(), graph, false, "a graph input"));
  SEQRT_ASSIGN_OR_RETURN(graph.outputs, value_ids(source.outputs(), graph,
                                                  false, "a graph output"));
  SEQRT_ASSIGN_OR_RETURN(
      graph.captures, value_ids(source.captures(), graph, false, "a capture"));
  SEQRT_RETURN_IF_ERROR(add_constants(source, graph));
  SEQRT_RETURN_IF_ERROR(add_state_pairs(source, graph));
  return add_metadata(source, graph);
}

Result<Graph> Converter::graph(const fb::Graph* source, int depth) {
  if (source == nullptr) return invalid_model("the model has no graph");
  if (depth > kMaxSubgraphDepth) {
    return invalid_model("subgraphs nest deeper than {} levels",
                         kMaxSubgraphDepth);
  }
  SEQRT_RETURN_IF_ERROR(charge(1));
  Graph graph;
  SEQRT_ASSIGN_OR_RETURN(graph.name, string(source->name()));
  Status status = graph_body(*source, depth, graph);
  if (!status.is_ok()) {
    return status.with_context("graph '" + graph.name + "'");
  }
  return graph;
}

}  // namespace

Result<Graph> graph_from_flatbuffer(const fb::Model& model,
                                    size_t flatbuffer_size,
                                    const SegmentTable& segments,
                                    std::shared_ptr<const void> owner) {
  Converter converter(segments, std::move(owner), flatbuffer_size);
  return converter.graph(model.graph(), 0);
}

}  // namespace seqrt
