#include "importers/onnx/function_inline.h"

#include <map>

#include "importers/onnx/op_table.h"

namespace seqrt {
namespace {

using onnx::AttributeProto;
using onnx::FunctionProto;
using onnx::NodeProto;

// Functions calling functions nest at most this deep (also stops
// recursion).
constexpr int kMaxInlineDepth = 32;

class Inliner {
 public:
  Inliner(const FunctionTable& functions, const OpRegistry& registry,
          std::set<std::string>& taken)
      : functions_(functions), registry_(registry), taken_(taken) {}

  Status expand(const NodeProto& node, int depth, std::vector<NodeProto>& out) {
    const FunctionProto* function = callee(node);
    if (function == nullptr) {
      out.push_back(node);
      return Status::ok();
    }
    if (depth >= kMaxInlineDepth) {
      return invalid_model(
          "function '{}' (called by node '{}') nests more than {} calls "
          "deep; is it recursive?",
          function->name(), node.name(), kMaxInlineDepth);
    }
    std::map<std::string, std::string> rename;
    SEQRT_RETURN_IF_ERROR(bind_formals(*function, node, rename));
    std::map<std::string, const AttributeProto*> attrs = call_attributes(node);
    std::string prefix = node.name().empty() ? function->name() : node.name();
    for (const NodeProto& body_node : function->node()) {
      NodeProto copy = body_node;
      for (std::string& name : *copy.mutable_output()) {
        if (name.empty()) continue;
        if (rename.count(name) == 0) rename[name] = fresh(prefix + "/" + name);
        name = rename[name];
      }
      for (std::string& name : *copy.mutable_input()) {
        auto it = rename.find(name);
        if (it != rename.end()) name = it->second;
      }
      if (!copy.name().empty()) copy.set_name(prefix + "/" + copy.name());
      SEQRT_RETURN_IF_ERROR(resolve_references(copy, attrs, *function));
      SEQRT_RETURN_IF_ERROR(expand(copy, depth + 1, out));
    }
    return Status::ok();
  }

 private:
  const FunctionProto* callee(const NodeProto& node) const {
    std::string domain = normalize_domain(node.domain());
    // An op we implement runs as that op: the function is for others.
    if (registry_.find(domain, node.op_type()) != nullptr) return nullptr;
    auto it = functions_.find({domain, node.op_type()});
    return it == functions_.end() ? nullptr : it->second;
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name) != 0; ++i) {
      name = fmt::format("{}_{}", base, i);
    }
    taken_.insert(name);
    return name;
  }

  // Formal parameters take the call's names; omitted ones become "".
  Status bind_formals(const FunctionProto& function, const NodeProto& node,
                      std::map<std::string, std::string>& rename) const {
    if (node.input_size() > function.input_size() ||
        node.output_size() > function.output_size()) {
      return invalid_model(
          "node '{}' calls function '{}' with {} inputs and {} outputs; it "
          "takes at most {} and {}",
          node.name(), function.name(), node.input_size(), node.output_size(),
          function.input_size(), function.output_size());
    }
    for (int i = 0; i < function.input_size(); ++i) {
      rename[function.input(i)] = i < node.input_size() ? node.input(i) : "";
    }
    for (int i = 0; i < function.output_size(); ++i) {
      rename[function.output(i)] = i < node.output_size() ? node.output(i) : "";
    }
    return Status::ok();
  }

  // The call's attributes. (Attribute defaults in FunctionProto came with
  // ONNX 1.13; the ONNX 1.12 schema we build against has none.)
  static std::map<std::string, const AttributeProto*> call_attributes(
      const NodeProto& node) {
    std::map<std::string, const AttributeProto*> attrs;
    for (const AttributeProto& attr : node.attribute()) {
      attrs[attr.name()] = &attr;
    }
    return attrs;
  }

  // `ref_attr_name` attributes take the call's value, or are dropped when
  // the call gives none (the body op's default then applies).
  static Status resolve_references(
      NodeProto& node,
      const std::map<std::string, const AttributeProto*>& attrs,
      const FunctionProto& function) {
    google::protobuf::RepeatedPtrField<AttributeProto> resolved;
    for (const AttributeProto& attr : node.attribute()) {
      if (attr.ref_attr_name().empty()) {
        *resolved.Add() = attr;
        continue;
      }
      auto it = attrs.find(attr.ref_attr_name());
      if (it == attrs.end()) continue;
      if (it->second->type() != attr.type()) {
        return invalid_model(
            "function '{}': node '{}' attribute '{}' refers to '{}' of type "
            "{}, but the call gives {}",
            function.name(), node.name(), attr.name(), attr.ref_attr_name(),
            AttributeProto::AttributeType_Name(attr.type()),
            AttributeProto::AttributeType_Name(it->second->type()));
      }
      AttributeProto* copy = resolved.Add();
      *copy = *it->second;
      copy->set_name(attr.name());
    }
    node.mutable_attribute()->Swap(&resolved);
    return Status::ok();
  }

  const FunctionTable& functions_;
  const OpRegistry& registry_;
  std::set<std::string>& taken_;
};

}  // namespace

Result<std::vector<NodeProto>> inline_functions(
    const google::protobuf::RepeatedPtrField<NodeProto>& nodes,
    const FunctionTable& functions, const OpRegistry& registry,
    std::set<std::string>& taken) {
  std::vector<NodeProto> out;
  if (functions.empty()) {
    out.assign(nodes.begin(), nodes.end());
    return out;
  }
  Inliner inliner(functions, registry, taken);
  for (const NodeProto& node : nodes) {
    SEQRT_RETURN_IF_ERROR(inliner.expand(node, 0, out));
  }
  return out;
}

}  // namespace seqrt
