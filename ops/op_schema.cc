#include "ops/op_schema.h"

#include <algorithm>

namespace seqrt {

const AttrSpec* OpSchema::find_attr(const std::string& attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  return nullptr;
}

std::string OpSchema::qualified_name() const {
  return domain.empty() ? name : domain + "::" + name;
}

namespace {

// Counts the node's values against the formal parameters.
Status check_arity(const Node& node, const std::vector<ParamSpec>& params,
                   const std::vector<ValueId>& actual, const char* what) {
  size_t required = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].optional) required = i + 1;
  }
  bool variadic = !params.empty() && params.back().variadic;
  if (actual.size() < required) {
    return invalid_model("{}: expects at least {} {}, got {}", node.label(),
                         required, what, actual.size());
  }
  if (!variadic && actual.size() > params.size()) {
    return invalid_model("{}: expects at most {} {}, got {}", node.label(),
                         params.size(), what, actual.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    const ParamSpec& param = params[std::min(i, params.size() - 1)];
    if (actual[i] == kNoValue && !param.optional) {
      return invalid_model("{}: {} '{}' is required but missing", node.label(),
                           what, param.name);
    }
  }
  return Status::ok();
}

}  // namespace

Status check_node(const Node& node, const OpSchema& schema) {
  SEQRT_RETURN_IF_ERROR(check_arity(node, schema.inputs, node.inputs, "input"));
  SEQRT_RETURN_IF_ERROR(
      check_arity(node, schema.outputs, node.outputs, "output"));
  for (const auto& [name, value] : node.attrs) {
    const AttrSpec* spec = schema.find_attr(name);
    if (spec == nullptr) {
      return invalid_model("{}: unknown attribute '{}'", node.label(), name);
    }
    if (value.type() != spec->type) {
      return invalid_model("{}: attribute '{}' must be {}, got {}",
                           node.label(), name, attr_type_name(spec->type),
                           attr_type_name(value.type()));
    }
    if (!spec->allowed.empty() &&
        std::find(spec->allowed.begin(), spec->allowed.end(),
                  value.as_string()) == spec->allowed.end()) {
      return invalid_model("{}: attribute '{}' is \"{}\"; allowed: {}",
                           node.label(), name, value.as_string(),
                           fmt::join(spec->allowed, ", "));
    }
    if (value.type() == AttrType::kGraph && value.as_graph() == nullptr) {
      return invalid_model("{}: graph attribute '{}' is empty", node.label(),
                           name);
    }
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (spec.required && node.attr(spec.name) == nullptr) {
      return invalid_model("{}: required attribute '{}' is missing",
                           node.label(), spec.name);
    }
  }
  return Status::ok();
}

}  // namespace seqrt
