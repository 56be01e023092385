#include "ops/node_attrs.h"

#include <cassert>

#include "ops/registry.h"

namespace seqrt {

OpContext node_attrs(const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.domain, node.op);
  assert(schema != nullptr && "node_attrs on a node of an unregistered op");
  // A schema without attributes: every read of an unset one then asserts.
  static const OpSchema kNoSchema;
  return OpContext(node, schema != nullptr ? *schema : kNoSchema);
}

int64_t node_attr_int(const Node& node, const std::string& name) {
  return node_attrs(node).attr_int(name);
}

float node_attr_float(const Node& node, const std::string& name) {
  return node_attrs(node).attr_float(name);
}

const std::string& node_attr_string(const Node& node, const std::string& name) {
  return node_attrs(node).attr_string(name);
}

}  // namespace seqrt
