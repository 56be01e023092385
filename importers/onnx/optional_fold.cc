#include "importers/onnx/optional_fold.h"

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "importers/onnx/op_table.h"

namespace seqrt {
namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::ValueInfoProto;

// What the fold knows of a name.
enum class Presence {
  kTensor,   // a tensor, or an optional known to hold one (now that tensor)
  kEmpty,    // an empty optional: it has no value in the converted graph
  kRunTime,  // an optional whose presence only a run could tell
};

struct Known {
  Presence presence = Presence::kTensor;
  std::string origin;  // kEmpty, kRunTime: what the value is, for errors
  // A bool scalar known at import (a folded OptionalHasElement, a Constant,
  // an initializer, Not or Identity of one): it picks an If's branch.
  std::optional<bool> constant;
};

const Known kTensor{};

// The names one graph defines so far, over those of its enclosing graphs
// (a subgraph reads enclosing values by name).
class Scope {
 public:
  explicit Scope(const Scope* outer) : outer_(outer) {}

  void define(const std::string& name, Known known) {
    if (!name.empty()) names_[name] = std::move(known);
  }

  // Null for a name no graph in reach defines.
  const Known* find(const std::string& name) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->outer_) {
      auto it = scope->names_.find(name);
      if (it != scope->names_.end()) return &it->second;
    }
    return nullptr;
  }

 private:
  const Scope* outer_;
  std::unordered_map<std::string, Known> names_;
};

bool is_optional(const ValueInfoProto& info) {
  return info.has_type() && info.type().has_optional_type();
}

// A present optional's declared type becomes its element's; without an
// element type it declares nothing (inference gives the type).
void unwrap_optional(onnx::TypeProto& type) {
  while (type.has_optional_type()) {
    onnx::TypeProto element;
    if (type.optional_type().has_elem_type()) {
      element = type.optional_type().elem_type();
    }
    type = std::move(element);
  }
}

// What each input of `graph` is before anything tells otherwise: a declared
// optional is known only at run time.
std::vector<Known> declared_inputs(const GraphProto& graph,
                                   const std::string& optional_origin) {
  std::vector<Known> inputs;
  for (const ValueInfoProto& info : graph.input()) {
    inputs.push_back(is_optional(info)
                         ? Known{Presence::kRunTime, optional_origin}
                         : kTensor);
  }
  return inputs;
}

// The value of a one-element bool tensor held in the proto itself.
std::optional<bool> bool_scalar(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::BOOL ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  for (int64_t dim : tensor.dims()) {
    if (dim != 1) return std::nullopt;
  }
  if (tensor.int32_data_size() == 1 && !tensor.has_raw_data()) {
    return tensor.int32_data(0) != 0;
  }
  if (tensor.int32_data_size() == 0 && tensor.raw_data().size() == 1) {
    return tensor.raw_data()[0] != 0;
  }
  return std::nullopt;
}

GraphProto* graph_attribute(NodeProto& node, const std::string& name) {
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    if (attr.name() == name && attr.has_g()) return attr.mutable_g();
  }
  return nullptr;
}

void become_identity(NodeProto& node) {
  node.set_op_type("Identity");
  node.clear_attribute();
}

void become_bool_constant(NodeProto& node, bool value) {
  node.set_op_type("Constant");
  node.set_domain("");
  node.clear_input();
  node.clear_attribute();
  onnx::AttributeProto& attr = *node.add_attribute();
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  attr.mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  attr.mutable_t()->add_int32_data(value ? 1 : 0);
}

const char* presence_word(const Known& known) {
  return known.presence == Presence::kEmpty ? "empty" : "present";
}

// Drops the entries of `field` at the (ascending) `indices`.
template <typename Field>
void erase_indices(Field& field, const std::vector<int>& indices) {
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    if (*it < field.size()) field.DeleteSubrange(*it, 1);
  }
}

class OptionalFolder {
 public:
  explicit OptionalFolder(const std::string& source) : source_(source) {}

  // Folds `graph`, whose inputs are as `inputs` says (one per graph input),
  // and says what each of its outputs is.
  Result<std::vector<Known>> fold_graph(GraphProto& graph, const Scope* outer,
                                        const std::vector<Known>& inputs) {
    Scope scope(outer);
    for (int i = 0; i < graph.input_size(); ++i) {
      scope.define(graph.input(i).name(), static_cast<size_t>(i) < inputs.size()
                                              ? inputs[i]
                                              : kTensor);
    }
    // IR < 4 lists initializers among the inputs: they are tensors.
    for (const onnx::TensorProto& init : graph.initializer()) {
      scope.define(init.name(),
                   Known{Presence::kTensor, "", bool_scalar(init)});
    }
    std::string where =
        graph.name().empty()
            ? source_
            : fmt::format("{}, graph '{}'", source_, graph.name());
    google::protobuf::RepeatedPtrField<NodeProto> folded;
    for (int i = 0; i < graph.node_size(); ++i) {
      NodeProto& node = *graph.mutable_node(i);
      std::vector<NodeProto> inlined;  // what replaces an If taken at import
      SEQRT_ASSIGN_OR_RETURN(bool keep,
                             fold_node(node, i, scope, where, inlined));
      if (keep) folded.Add()->Swap(&node);
      for (NodeProto& replacement : inlined) {
        folded.Add()->Swap(&replacement);
      }
    }
    graph.mutable_node()->Swap(&folded);
    rewrite_declared_types(graph, scope);
    std::vector<Known> outputs;
    for (const ValueInfoProto& info : graph.output()) {
      const Known* known = scope.find(info.name());
      outputs.push_back(known != nullptr ? *known : kTensor);
    }
    return outputs;
  }

 private:
  struct Site {
    std::string where;  // the model and graph
    std::string label;  // "[Op] node 'name'"
  };

  // Whether `node` stays in its graph.
  Result<bool> fold_node(NodeProto& node, int index, Scope& scope,
                         const std::string& where,
                         std::vector<NodeProto>& inlined) {
    Site site{where, fmt::format("[{}] node '{}'", node.op_type(),
                                 node.name().empty() ? fmt::format("#{}", index)
                                                     : node.name())};
    if (normalize_domain(node.domain()).empty()) {
      const std::string& op = node.op_type();
      if (op == "Optional") return fold_optional(node, scope, site);
      if (op == "OptionalHasElement") {
        return fold_has_element(node, scope, site);
      }
      if (op == "OptionalGetElement") {
        return fold_get_element(node, scope, site);
      }
      if (op == "Identity" && node.input_size() == 1 &&
          node.output_size() == 1) {
        const Known* known = scope.find(node.input(0));
        if (known != nullptr && known->presence == Presence::kEmpty) {
          scope.define(node.output(0), *known);
          return false;
        }
      }
      if (op == "If") return fold_if(node, scope, site, inlined);
      if (op == "Loop") return fold_loop(node, scope, site);
    }
    SEQRT_ASSIGN_OR_RETURN(bool keep, fold_other(node, scope, site));
    if (normalize_domain(node.domain()).empty() && node.output_size() == 1) {
      std::optional<bool> value = known_bool(node, scope);
      if (value) {
        scope.define(node.output(0), Known{Presence::kTensor, "", value});
      }
    }
    return keep;
  }

  // The bool scalar that a Constant, or Not or Identity of a known one,
  // makes (bool inputs only: Identity keeps any type, Not takes bool).
  static std::optional<bool> known_bool(const NodeProto& node,
                                        const Scope& scope) {
    const std::string& op = node.op_type();
    if (op == "Constant" && node.input_size() == 0) {
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.name() == "value" && attr.has_t()) {
          return bool_scalar(attr.t());
        }
      }
      return std::nullopt;
    }
    if ((op != "Not" && op != "Identity") || node.input_size() != 1) {
      return std::nullopt;
    }
    const Known* input = scope.find(node.input(0));
    if (input == nullptr || !input->constant) return std::nullopt;
    return op == "Not" ? !*input->constant : *input->constant;
  }

  Status refuse_read(const Site& site, const std::string& name,
                     const Known& known) const {
    if (known.presence == Presence::kRunTime) {
      return unsupported(
          "{}: {} reads '{}', {}; seqrt resolves optionals at import",
          site.where, site.label, name, known.origin);
    }
    return unsupported(
        "{}: {} reads '{}', {}; seqrt resolves optionals at import, and "
        "only OptionalHasElement, Identity and If branch outputs may take "
        "an empty one",
        site.where, site.label, name, known.origin);
  }

  // What input `name` of an Optional* node is; it must be defined.
  Result<Known> read_defined(const Scope& scope, const Site& site,
                             const std::string& name) const {
    const Known* known = scope.find(name);
    if (known == nullptr) {
      return invalid_model(
          "{}: {} reads '{}', which no graph input, initializer or earlier "
          "node defines",
          site.where, site.label, name);
    }
    return *known;
  }

  // Refuses a read of an empty or run-time optional by `node`'s inputs.
  Status check_reads(const NodeProto& node, const Scope& scope,
                     const Site& site) const {
    for (const std::string& name : node.input()) {
      const Known* known = name.empty() ? nullptr : scope.find(name);
      if (known != nullptr && known->presence != Presence::kTensor) {
        return refuse_read(site, name, *known);
      }
    }
    return Status::ok();
  }

  Status check_arity(const NodeProto& node, const Site& site, int min_inputs,
                     int max_inputs) const {
    if (node.input_size() < min_inputs || node.input_size() > max_inputs ||
        node.output_size() != 1) {
      return invalid_model(
          "{}: {} has {} input(s) and {} output(s); {} takes {} to {} "
          "input(s) and makes 1 output",
          site.where, site.label, node.input_size(), node.output_size(),
          node.op_type(), min_inputs, max_inputs);
    }
    return Status::ok();
  }

  // Optional(x) is x; Optional() is an empty optional, and no node.
  Result<bool> fold_optional(NodeProto& node, Scope& scope, const Site& site) {
    SEQRT_RETURN_IF_ERROR(check_arity(node, site, 0, 1));
    if (node.input_size() == 1 && !node.input(0).empty()) {
      SEQRT_RETURN_IF_ERROR(check_reads(node, scope, site));
      become_identity(node);
      scope.define(node.output(0), kTensor);
      return true;
    }
    scope.define(
        node.output(0),
        Known{Presence::kEmpty,
              fmt::format("an empty optional made by {}", site.label)});
    return false;
  }

  Result<bool> fold_has_element(NodeProto& node, Scope& scope,
                                const Site& site) {
    SEQRT_RETURN_IF_ERROR(check_arity(node, site, 0, 1));
    bool present = false;  // no input: an empty optional
    if (node.input_size() == 1 && !node.input(0).empty()) {
      SEQRT_ASSIGN_OR_RETURN(Known known,
                             read_defined(scope, site, node.input(0)));
      if (known.presence == Presence::kRunTime) {
        return refuse_read(site, node.input(0), known);
      }
      present = known.presence == Presence::kTensor;
    }
    become_bool_constant(node, present);
    scope.define(node.output(0), Known{Presence::kTensor, "", present});
    return true;
  }

  Result<bool> fold_get_element(NodeProto& node, Scope& scope,
                                const Site& site) {
    SEQRT_RETURN_IF_ERROR(check_arity(node, site, 1, 1));
    if (node.input(0).empty()) {
      return invalid_model("{}: {} has no input to get the element of",
                           site.where, site.label);
    }
    SEQRT_ASSIGN_OR_RETURN(Known known,
                           read_defined(scope, site, node.input(0)));
    if (known.presence == Presence::kEmpty) {
      return unsupported(
          "{}: {} reads '{}', {}: it has no element to get (seqrt resolves "
          "optionals at import)",
          site.where, site.label, node.input(0), known.origin);
    }
    if (known.presence == Presence::kRunTime) {
      return refuse_read(site, node.input(0), known);
    }
    become_identity(node);
    scope.define(node.output(0), kTensor);
    return true;
  }

  // An output present in both branches is a tensor; one empty in both is
  // removed from the node and its branches; any other is refused. An If
  // involving optionals whose condition is known at import (`if x is None`
  // on a known optional) is replaced by the branch taken, the other left
  // unfolded (it may read the missing element).
  Result<bool> fold_if(NodeProto& node, Scope& scope, const Site& site,
                       std::vector<NodeProto>& inlined) {
    GraphProto* then_branch = graph_attribute(node, "then_branch");
    GraphProto* else_branch = graph_attribute(node, "else_branch");
    if (then_branch == nullptr || else_branch == nullptr) {
      return fold_other(node, scope, site);  // the If's own check refuses it
    }
    SEQRT_RETURN_IF_ERROR(check_reads(node, scope, site));
    const Known* cond =
        node.input_size() == 1 ? scope.find(node.input(0)) : nullptr;
    if (cond != nullptr && cond->constant &&
        (involves_optionals(*then_branch, scope) ||
         involves_optionals(*else_branch, scope))) {
      GraphProto& taken = *cond->constant ? *then_branch : *else_branch;
      SEQRT_ASSIGN_OR_RETURN(
          std::vector<Known> out,
          fold_graph(taken, &scope,
                     declared_inputs(taken, body_input_origin(site))));
      SEQRT_RETURN_IF_ERROR(
          join_outputs(node, out, out, *then_branch, *else_branch, scope, site,
                       "the branch that " + site.label + " takes")
              .status());
      SEQRT_ASSIGN_OR_RETURN(inlined, inline_branch(node, taken, site));
      return false;
    }
    SEQRT_ASSIGN_OR_RETURN(
        std::vector<Known> then_out,
        fold_graph(*then_branch, &scope,
                   declared_inputs(*then_branch, body_input_origin(site))));
    SEQRT_ASSIGN_OR_RETURN(
        std::vector<Known> else_out,
        fold_graph(*else_branch, &scope,
                   declared_inputs(*else_branch, body_input_origin(site))));
    return join_outputs(node, then_out, else_out, *then_branch, *else_branch,
                        scope, site, "both branches of " + site.label);
  }

  // The nodes that replace `node`, an If that always takes `branch`
  // (folded, its empty outputs already removed): the branch's initializers
  // as Constants, its nodes, then an Identity to each output of the If.
  // Inlined rather than kept with a copy in the other branch: copies
  // would double at each level of nested Ifs.
  Result<std::vector<NodeProto>> inline_branch(const NodeProto& node,
                                               GraphProto& branch,
                                               const Site& site) const {
    if (branch.output_size() != node.output_size()) {
      return invalid_model("{}: {} has {} output(s), its branch '{}' {}",
                           site.where, site.label, node.output_size(),
                           branch.name(), branch.output_size());
    }
    if (branch.sparse_initializer_size() > 0) {
      return unsupported("{}: sparse initializer '{}' is not supported",
                         site.where,
                         branch.sparse_initializer(0).values().name());
    }
    std::vector<NodeProto> nodes;
    for (onnx::TensorProto& init : *branch.mutable_initializer()) {
      NodeProto constant;
      constant.set_op_type("Constant");
      constant.add_output(init.name());
      onnx::AttributeProto& attr = *constant.add_attribute();
      attr.set_name("value");
      attr.set_type(onnx::AttributeProto::TENSOR);
      attr.mutable_t()->Swap(&init);
      nodes.push_back(std::move(constant));
    }
    for (NodeProto& inner : *branch.mutable_node()) {
      nodes.emplace_back();
      nodes.back().Swap(&inner);
    }
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& from = branch.output(i).name();
      if (node.output(i).empty() || from == node.output(i)) continue;
      NodeProto identity;
      identity.set_op_type("Identity");
      identity.set_name(node.name().empty() ? "" : node.name() + "/" + from);
      identity.add_input(from);
      identity.add_output(node.output(i));
      nodes.push_back(std::move(identity));
    }
    return nodes;
  }

  // Whether folding `graph` could change it or fail: it has an Optional*
  // node or declares an optional, or reads a name `scope` knows as one.
  static bool involves_optionals(const GraphProto& graph, const Scope& scope) {
    for (const ValueInfoProto& info : graph.input()) {
      if (is_optional(info)) return true;
    }
    auto optional_name = [&scope](const std::string& name) {
      const Known* known = scope.find(name);
      return known != nullptr && known->presence != Presence::kTensor;
    };
    for (const ValueInfoProto& info : graph.output()) {
      if (is_optional(info) || optional_name(info.name())) return true;
    }
    for (const ValueInfoProto& info : graph.value_info()) {
      if (is_optional(info)) return true;
    }
    for (const NodeProto& node : graph.node()) {
      if (normalize_domain(node.domain()).empty() &&
          node.op_type().rfind("Optional", 0) == 0) {
        return true;
      }
      for (const std::string& name : node.input()) {
        if (optional_name(name)) return true;
      }
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.has_g() && involves_optionals(attr.g(), scope)) return true;
        for (const GraphProto& sub : attr.graphs()) {
          if (involves_optionals(sub, scope)) return true;
        }
      }
    }
    return false;
  }

  Result<bool> join_outputs(NodeProto& node, const std::vector<Known>& then_out,
                            const std::vector<Known>& else_out,
                            GraphProto& then_branch, GraphProto& else_branch,
                            Scope& scope, const Site& site,
                            const std::string& branches) {
    std::vector<int> empty;
    for (int i = 0; i < node.output_size(); ++i) {
      Known out = kTensor;
      if (static_cast<size_t>(i) < then_out.size() &&
          static_cast<size_t>(i) < else_out.size()) {
        SEQRT_ASSIGN_OR_RETURN(out, join_branches(node, i, then_out[i],
                                                  else_out[i], site, branches));
      }
      if (out.presence == Presence::kEmpty) empty.push_back(i);
      scope.define(node.output(i), std::move(out));
    }
    erase_indices(*node.mutable_output(), empty);
    erase_indices(*then_branch.mutable_output(), empty);
    erase_indices(*else_branch.mutable_output(), empty);
    return node.output_size() > 0;
  }

  Result<Known> join_branches(const NodeProto& node, int i, const Known& a,
                              const Known& b, const Site& site,
                              const std::string& branches) const {
    for (const Known* branch : {&a, &b}) {
      if (branch->presence == Presence::kRunTime) {
        return unsupported(
            "{}: {} output '{}' is, in one branch, {}; seqrt resolves "
            "optionals at import",
            site.where, site.label, node.output(i), branch->origin);
      }
    }
    if (a.presence != b.presence) {
      return unsupported(
          "{}: {} output '{}' is an optional {} in then_branch and {} in "
          "else_branch; seqrt resolves optionals at import and cannot know "
          "which branch runs",
          site.where, site.label, node.output(i), presence_word(a),
          presence_word(b));
    }
    if (a.presence == Presence::kTensor) return kTensor;
    return Known{Presence::kEmpty, "an empty optional from " + branches};
  }

  // A carried optional must be present on entry and after every iteration:
  // it is a tensor throughout.
  Result<bool> fold_loop(NodeProto& node, Scope& scope, const Site& site) {
    GraphProto* body = graph_attribute(node, "body");
    if (body == nullptr || node.input_size() < 2) {
      return fold_other(node, scope, site);  // the Loop's own check refuses it
    }
    std::vector<Known> inputs = declared_inputs(*body, body_input_origin(site));
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string& name = node.input(i);
      const Known* known = name.empty() ? nullptr : scope.find(name);
      if (known == nullptr || known->presence == Presence::kTensor) {
        if (i >= 2 && static_cast<size_t>(i) < inputs.size()) {
          inputs[i] = kTensor;
        }
        continue;
      }
      if (i >= 2 && known->presence == Presence::kEmpty) {
        return unsupported(
            "{}: {} carries '{}', {}, into its body; seqrt resolves optionals "
            "at import and carries only optionals present on entry",
            site.where, site.label, name, known->origin);
      }
      return refuse_read(site, name, *known);
    }
    SEQRT_RETURN_IF_ERROR(fold_body(*body, scope, site, inputs));
    for (const std::string& output : node.output()) {
      scope.define(output, kTensor);
    }
    return true;
  }

  // Folds a subgraph of `site`'s node (not an If: it joins its branches'
  // outputs), whose outputs must all be tensors.
  Status fold_body(GraphProto& body, const Scope& scope, const Site& site,
                   const std::vector<Known>& inputs) {
    SEQRT_ASSIGN_OR_RETURN(std::vector<Known> outputs,
                           fold_graph(body, &scope, inputs));
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].presence != Presence::kTensor) {
        return unsupported(
            "{}: {} body output '{}' is {}; seqrt resolves optionals at "
            "import and needs it present in every iteration",
            site.where, site.label, body.output(static_cast<int>(i)).name(),
            outputs[i].origin);
      }
    }
    return Status::ok();
  }

  std::string body_input_origin(const Site& site) const {
    return fmt::format(
        "an optional input of the body of {}, whose presence is known only "
        "at run time",
        site.label);
  }

  // Any other node: it must not read an empty or run-time optional; its
  // subgraphs are folded and its outputs are tensors.
  Result<bool> fold_other(NodeProto& node, Scope& scope, const Site& site) {
    SEQRT_RETURN_IF_ERROR(check_reads(node, scope, site));
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) {
        GraphProto& body = *attr.mutable_g();
        SEQRT_RETURN_IF_ERROR(fold_body(
            body, scope, site, declared_inputs(body, body_input_origin(site))));
      }
      for (GraphProto& body : *attr.mutable_graphs()) {
        SEQRT_RETURN_IF_ERROR(fold_body(
            body, scope, site, declared_inputs(body, body_input_origin(site))));
      }
    }
    for (const std::string& output : node.output()) {
      scope.define(output, kTensor);
    }
    return true;
  }

  // Declared optionals that are present become their element types; those
  // of empty ones go (nothing defines the name now). Empty graph outputs
  // stay for the node that owns the graph to judge.
  static void rewrite_declared_types(GraphProto& graph, const Scope& scope) {
    auto& infos = *graph.mutable_value_info();
    for (int i = infos.size() - 1; i >= 0; --i) {
      const Known* known = scope.find(infos.Get(i).name());
      if (known != nullptr && known->presence == Presence::kEmpty) {
        infos.DeleteSubrange(i, 1);
      } else if (known == nullptr || known->presence == Presence::kTensor) {
        unwrap_optional(*infos.Mutable(i)->mutable_type());
      }
    }
    for (auto* field : {graph.mutable_input(), graph.mutable_output()}) {
      for (ValueInfoProto& info : *field) {
        const Known* known = scope.find(info.name());
        if (known != nullptr && known->presence == Presence::kTensor &&
            info.has_type()) {
          unwrap_optional(*info.mutable_type());
        }
      }
    }
  }

  const std::string& source_;
};

}  // namespace

Status fold_optionals(GraphProto& graph, const std::string& source) {
  OptionalFolder folder(source);
  std::vector<Known> inputs = declared_inputs(
      graph,
      "an optional graph input, whose presence is known only at run "
      "time");
  SEQRT_ASSIGN_OR_RETURN(std::vector<Known> outputs,
                         folder.fold_graph(graph, nullptr, inputs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].presence != Presence::kTensor) {
      return unsupported(
          "{}: graph output '{}' is {}; seqrt resolves optionals at import "
          "and its outputs are tensors",
          source, graph.output(static_cast<int>(i)).name(), outputs[i].origin);
    }
  }
  return Status::ok();
}

}  // namespace seqrt
