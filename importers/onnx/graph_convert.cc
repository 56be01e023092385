#include "importers/onnx/graph_convert.h"

#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "importers/onnx/attribute_convert.h"
#include "importers/onnx/gather_block_quantized.h"
#include "importers/onnx/matmul_nbits.h"
#include "importers/onnx/op_table.h"
#include "importers/onnx/tensor_convert.h"

namespace seqrt {
namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::ValueInfoProto;

// Declared type of a ValueInfoProto: dtype plus dims (fixed, symbol or
// unknown); a missing shape leaves the rank unknown.
Result<Value> value_from_info(const ValueInfoProto& info,
                              const std::string& what) {
  Value value;
  value.name = info.name();
  // An empty `type {}` (valid ONNX: exporters write it for subgraph
  // outputs) declares nothing; inference gives the value its type.
  if (!info.has_type() ||
      info.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
    return value;
  }
  if (info.type().has_optional_type()) {
    // optional_fold.cc resolved every optional whose presence is known.
    return unsupported(
        "{} '{}' is an optional whose presence is known only at run time; "
        "seqrt resolves optionals at import",
        what, info.name());
  }
  if (!info.type().has_tensor_type()) {
    return unsupported(
        "{} '{}' is not a tensor (sequences and maps are not supported)", what,
        info.name());
  }
  const auto& tensor_type = info.type().tensor_type();
  if (tensor_type.elem_type() != onnx::TensorProto::UNDEFINED) {
    std::optional<DType> dtype = dtype_from_onnx(tensor_type.elem_type());
    if (!dtype) {
      return unsupported("{} '{}' has element type {}, which is not supported",
                         what, info.name(),
                         onnx_type_name(tensor_type.elem_type()));
    }
    value.dtype = *dtype;
  }
  if (!tensor_type.has_shape()) return value;
  Shape shape;
  for (const auto& dim : tensor_type.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return invalid_model("{} '{}' has a negative dim {}", what, info.name(),
                             dim.dim_value());
      }
      shape.dims().push_back(Dim(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      shape.dims().push_back(Dim::symbol(dim.dim_param()));
    } else {
      shape.dims().push_back(Dim::unknown());
    }
  }
  value.shape = std::move(shape);
  return value;
}

// Whether concrete `dims` agree with a declared shape's rank and fixed dims.
bool fits_declared(const Shape& declared, const std::vector<int64_t>& dims) {
  if (declared.rank() != dims.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (declared[d].is_fixed() && declared[d].value() != dims[d]) return false;
  }
  return true;
}

class GraphConverter {
 public:
  GraphConverter(const GraphProto& proto, ImportContext& ctx,
                 const OuterScope* outer)
      : proto_(proto), ctx_(ctx), outer_(outer) {
    graph_.name = proto.name();
  }

  Result<Graph> run() {
    SEQRT_RETURN_IF_ERROR(read_value_infos());
    SEQRT_RETURN_IF_ERROR(add_initializers());
    SEQRT_RETURN_IF_ERROR(add_inputs());
    std::set<std::string> taken = all_names();
    SEQRT_ASSIGN_OR_RETURN(std::vector<NodeProto> nodes,
                           inline_functions(proto_.node(), *ctx_.functions,
                                            *ctx_.registry, taken));
    for (size_t i = 0; i < nodes.size(); ++i) {
      SEQRT_RETURN_IF_ERROR(add_node(nodes[i], i));
    }
    SEQRT_RETURN_IF_ERROR(add_outputs());
    drop_replaced_weights(graph_, replaced_);
    return std::move(graph_);
  }

 private:
  std::string where() const {
    return graph_.name.empty()
               ? ctx_.source
               : fmt::format("{}, graph '{}'", ctx_.source, graph_.name);
  }

  Status read_value_infos() {
    for (const ValueInfoProto& info : proto_.value_info()) {
      SEQRT_ASSIGN_OR_RETURN(Value value,
                             value_from_info(info, where() + ": value"));
      declared_[info.name()] = std::move(value);
    }
    for (const ValueInfoProto& info : proto_.output()) {
      SEQRT_ASSIGN_OR_RETURN(Value value,
                             value_from_info(info, where() + ": graph output"));
      declared_[info.name()] = std::move(value);
    }
    return Status::ok();
  }

  Result<ValueId> define(Value value, const std::string& what) {
    if (value.name.empty()) {
      return invalid_model("{}: {} has no name", where(), what);
    }
    if (names_.count(value.name) != 0) {
      return invalid_model("{}: {} '{}' is defined twice", where(), what,
                           value.name);
    }
    std::string name = value.name;
    ValueId id = graph_.add_value(std::move(value));
    names_[name] = id;
    return id;
  }

  Status add_initializers() {
    if (proto_.sparse_initializer_size() > 0) {
      return unsupported("{}: sparse initializer '{}' is not supported",
                         where(), proto_.sparse_initializer(0).values().name());
    }
    const bool release = ctx_.releasable_graph == &proto_;
    for (int i = 0; i < proto_.initializer_size(); ++i) {
      const onnx::TensorProto& init = proto_.initializer(i);
      std::string what =
          fmt::format("{}: initializer '{}'", where(), init.name());
      SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                             tensor_from_proto(init, ctx_.model_dir, what));
      if (release) {
        std::string().swap(
            *ctx_.releasable_graph->mutable_initializer(i)->mutable_raw_data());
        report_progress(ctx_.progress, "converting weights", i + 1,
                        proto_.initializer_size());
      }
      Value value;
      value.name = init.name();
      value.dtype = tensor.dtype();
      value.shape = tensor.shape();
      SEQRT_ASSIGN_OR_RETURN(ValueId id,
                             define(std::move(value), "initializer"));
      graph_.constants[id] = std::move(tensor);
    }
    return Status::ok();
  }

  Status add_inputs() {
    for (const ValueInfoProto& info : proto_.input()) {
      // IR < 4 lists initializers among the inputs: they stay constants.
      if (names_.count(info.name()) != 0 &&
          graph_.is_constant(names_[info.name()])) {
        continue;
      }
      SEQRT_ASSIGN_OR_RETURN(Value value,
                             value_from_info(info, where() + ": graph input"));
      // Subgraph inputs may leave their type to the node that runs them.
      if (value.dtype == DType::kUndefined && outer_ == nullptr) {
        return invalid_model("{}: graph input '{}' has no element type",
                             where(), info.name());
      }
      SEQRT_ASSIGN_OR_RETURN(ValueId id,
                             define(std::move(value), "graph input"));
      graph_.inputs.push_back(id);
    }
    return Status::ok();
  }

  std::set<std::string> all_names() const {
    std::set<std::string> taken;
    for (const auto& entry : names_) taken.insert(entry.first);
    for (const auto& entry : declared_) taken.insert(entry.first);
    for (const NodeProto& node : proto_.node()) {
      for (const std::string& name : node.output()) taken.insert(name);
      for (const std::string& name : node.input()) taken.insert(name);
    }
    return taken;
  }

  // A name this graph does not define: a capture when an enclosing graph
  // can resolve it, else kNoValue.
  ValueId capture(const std::string& name) {
    if (outer_ == nullptr) return kNoValue;
    ValueId outer_id = outer_->resolve(name);
    if (outer_id == kNoValue) return kNoValue;
    Value value = outer_->graph->value(outer_id);
    ValueId id = graph_.add_value(std::move(value));
    names_[name] = id;
    graph_.captures.push_back(id);
    return id;
  }

  // The id of `name` here, capturing it when an enclosing graph has it.
  ValueId lookup(const std::string& name) {
    auto it = names_.find(name);
    return it != names_.end() ? it->second : capture(name);
  }

  Result<ValueId> resolve(const std::string& name, const std::string& user) {
    ValueId id = lookup(name);
    if (id != kNoValue) return id;
    return invalid_model(
        "{}: {} reads '{}', which no graph input, initializer or earlier "
        "node defines",
        where(), user, name);
  }

  std::string label_of(const NodeProto& node, size_t index) const {
    std::string name =
        node.name().empty() ? fmt::format("#{}", index) : node.name();
    return fmt::format("[{}] node '{}'", node.op_type(), name);
  }

  Result<std::shared_ptr<Graph>> convert_subgraph(const GraphProto& sub) {
    OuterScope scope{&graph_,
                     [this](const std::string& name) { return lookup(name); }};
    SEQRT_ASSIGN_OR_RETURN(Graph graph, convert_graph(sub, ctx_, &scope));
    return std::make_shared<Graph>(std::move(graph));
  }

  Status add_attributes(const NodeProto& proto, Node& node,
                        const std::string& label) {
    SubgraphFn subgraph = [this](const GraphProto& sub) {
      return convert_subgraph(sub);
    };
    for (const onnx::AttributeProto& attr : proto.attribute()) {
      if (!attr.ref_attr_name().empty()) {
        return invalid_model(
            "{}: attribute '{}' refers to '{}' outside a "
            "function body",
            label, attr.name(), attr.ref_attr_name());
      }
      SEQRT_ASSIGN_OR_RETURN(
          Attribute value,
          convert_attribute(attr, label, ctx_.model_dir, subgraph));
      node.attrs[attr.name()] = std::move(value);
    }
    return Status::ok();
  }

  ValueId add_constant(Tensor tensor, const std::string& hint) {
    std::string name = hint.empty() ? "constant" : hint;
    for (int i = 1; names_.count(name) != 0 || declared_.count(name) != 0;
         ++i) {
      name = fmt::format("{}_{}", hint, i);
    }
    Value value;
    value.name = name;
    value.dtype = tensor.dtype();
    value.shape = tensor.shape();
    ValueId id = graph_.add_value(std::move(value));
    names_[name] = id;
    graph_.constants[id] = std::move(tensor);
    return id;
  }

  // Looks the op up and upgrades older versions; unknown ops are recorded.
  Status map_op(Node& node, int opset) {
    const bool nbits =
        node.domain == kMicrosoftDomain && node.op == "MatMulNBits";
    const bool gather_quantized =
        node.domain == kMicrosoftDomain && node.op == "GatherBlockQuantized";
    if (nbits || gather_quantized) {
      AddConstantFn add = [this](Tensor tensor, const std::string& hint) {
        return add_constant(std::move(tensor), hint);
      };
      // The weights (MatMulNBits' B, scales, zero points; the table, its
      // scales and zero points), dropped at the end once unread.
      for (size_t i = 0; i < node.inputs.size() && i < 4; ++i) {
        if ((nbits ? i != 0 : i != 1) && graph_.constant(node.inputs[i])) {
          replaced_.insert(node.inputs[i]);
        }
      }
      return nbits ? convert_matmul_nbits(node, graph_, add)
                   : convert_gather_block_quantized(node, graph_, add);
    }
    const std::string& domain = node.domain;
    bool known = ctx_.registry->find(domain, node.op) != nullptr;
    const OnnxOpVersion* version = nullptr;
    if (domain != kSeqrtDomain) {
      version = find_onnx_op(domain, node.op, opset);
      known = known && version != nullptr;
    }
    if (!known) {
      ctx_.unsupported.push_back(fmt::format(
          "{} (domain '{}', opset {}) in {}", node.op,
          domain.empty() ? "ai.onnx" : domain, opset, node.label()));
      return Status::ok();
    }
    if (version != nullptr && version->upgrade != nullptr) {
      AddConstantFn add = [this](Tensor tensor, const std::string& hint) {
        return add_constant(std::move(tensor), hint);
      };
      return version->upgrade(node, add);
    }
    return Status::ok();
  }

  Status add_node(const NodeProto& proto, size_t index) {
    Node node;
    node.name = proto.name();
    node.op = proto.op_type();
    node.domain = normalize_domain(proto.domain());
    std::string label = label_of(proto, index);
    auto opset = ctx_.opsets.find(node.domain);
    if (opset == ctx_.opsets.end()) {
      return invalid_model(
          "{}: {} uses domain '{}', which the model's "
          "opset_import does not list",
          where(), label, proto.domain());
    }
    for (const std::string& name : proto.input()) {
      if (name.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      SEQRT_ASSIGN_OR_RETURN(ValueId id, resolve(name, label));
      node.inputs.push_back(id);
    }
    SEQRT_RETURN_IF_ERROR(add_attributes(proto, node, label));
    for (const std::string& name : proto.output()) {
      if (name.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      auto declared = declared_.find(name);
      Value value = declared != declared_.end() ? declared->second : Value{};
      value.name = name;
      Result<ValueId> id = define(std::move(value), "node output");
      if (!id.is_ok()) return id.status().with_context(label);
      node.outputs.push_back(*id);
    }
    // Trailing omitted outputs carry no meaning: drop them.
    while (!node.outputs.empty() && node.outputs.back() == kNoValue) {
      node.outputs.pop_back();
    }
    SEQRT_RETURN_IF_ERROR(map_op(node, opset->second));
    if (hold_as_constant(node)) return Status::ok();
    graph_.nodes.push_back(std::move(node));
    return Status::ok();
  }

  // A Constant node's value is known at import: the graph holds it as a
  // constant, so that no run executes the node (exports carry hundreds of
  // them, in subgraphs too) whether or not the passes run. A node whose
  // value cannot be made (an unsupported attribute) stays a node and fails
  // with the op's own error.
  bool hold_as_constant(const Node& node) {
    if (!node.domain.empty() || node.op != "Constant" ||
        node.outputs.size() != 1 || node.outputs[0] == kNoValue) {
      return false;
    }
    const OpSchema* schema = ctx_.registry->find("", "Constant");
    // The kernel trusts what check_node checks (attribute types).
    if (schema == nullptr || !check_node(node, *schema).is_ok()) return false;
    KernelContext kernel(node, *schema, {});
    if (!schema->reference(kernel).is_ok() || kernel.outputs().size() != 1) {
      return false;
    }
    Tensor& tensor = kernel.outputs()[0];
    Value& value = graph_.value(node.outputs[0]);
    if ((value.dtype != DType::kUndefined && value.dtype != tensor.dtype()) ||
        (value.shape && !fits_declared(*value.shape, tensor.dims()))) {
      return false;  // contradicts its declaration: let verification say so
    }
    value.dtype = tensor.dtype();
    value.shape = tensor.shape();
    graph_.constants[node.outputs[0]] = std::move(tensor);
    return true;
  }

  Status add_outputs() {
    for (const ValueInfoProto& info : proto_.output()) {
      SEQRT_ASSIGN_OR_RETURN(ValueId id,
                             resolve(info.name(), "the graph's outputs"));
      Value& value = graph_.value(id);
      const Value& declared = declared_[info.name()];
      if (value.dtype == DType::kUndefined) value.dtype = declared.dtype;
      if (!value.shape) value.shape = declared.shape;
      graph_.outputs.push_back(id);
    }
    return Status::ok();
  }

  const GraphProto& proto_;
  ImportContext& ctx_;
  const OuterScope* outer_;
  Graph graph_;
  std::unordered_map<std::string, ValueId> names_;
  std::map<std::string, Value> declared_;
  // Constants a MatMulNBits import replaced: dropped at the end if unread.
  std::set<ValueId> replaced_;
};

}  // namespace

Result<Graph> convert_graph(const GraphProto& proto, ImportContext& ctx,
                            const OuterScope* outer) {
  return GraphConverter(proto, ctx, outer).run();
}

}  // namespace seqrt
