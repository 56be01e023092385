// A node's attributes with its op's schema defaults, for code that holds a
// Node but no KernelContext (a backend recording a dispatch, checking
// support). The default is read from the schema (ops/<folder>/<op>.cc), so
// no backend restates it and none can drift from the reference.
#pragma once

#include <string>

#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt {

// The node's attributes seen through the registered schema of its op: the
// node's value where it sets one, else the schema's default. The node must
// outlive the context. Reading an attribute the schema does not declare
// with a default (and the node does not set) is a bug in the caller and
// asserts, as OpContext does; check has_attr() for optional ones.
OpContext node_attrs(const Node& node);

int64_t node_attr_int(const Node& node, const std::string& name);
float node_attr_float(const Node& node, const std::string& name);
const std::string& node_attr_string(const Node& node, const std::string& name);

}  // namespace seqrt
