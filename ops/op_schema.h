// One definition per op: schema (inputs, outputs, typed attributes with
// defaults), shape/dtype inference and the reference kernel. See README.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt {

struct ParamSpec {
  std::string name;
  bool optional = false;  // may be omitted (kNoValue) or left off the end
  bool variadic = false;  // only the last parameter: one or more values
};

struct AttrSpec {
  std::string name;
  AttrType type = AttrType::kInt;
  // Default when the node omits it; no default and !required means the
  // attribute is simply absent (the op checks has_attr()).
  std::optional<Attribute> default_value;
  bool required = false;
  // For string attributes: the allowed values (empty: any).
  std::vector<std::string> allowed;
};

using InferFn = std::function<Status(InferContext&)>;
// Gives types to the inputs of graph attribute `attr` that the subgraph
// leaves undeclared (ONNX lets Loop and Scan bodies omit them), from the
// node's input types in `ctx`; called before the subgraph is typed.
using TypeBodyInputsFn = std::function<Status(
    const InferContext& ctx, const std::string& attr, Graph& body)>;
using ReferenceFn = std::function<Status(KernelContext&)>;

struct OpSchema {
  std::string domain;  // kOnnxDomain ("") or kSeqrtDomain
  std::string name;
  std::string doc;  // one line
  std::vector<ParamSpec> inputs;
  std::vector<ParamSpec> outputs;
  std::vector<AttrSpec> attrs;
  InferFn infer;          // sets every output's dtype and shape
  ReferenceFn reference;  // the specification; allocates its outputs
  TypeBodyInputsFn type_body_inputs;  // ops with subgraphs only; optional
  // Takes and makes the storage-only dtypes (i4, u4, the float8s; see
  // is_storage_only in graph/dtype.h): Cast, CastLike, Constant and the
  // quantization ops. Type checking refuses them for every other op, so no
  // kernel reads a packed or float8 tensor as whole bytes.
  bool storage_only_types = false;
  // False for a graph attribute that cannot run given the node's known
  // inputs (If's branch not taken when cond is known): inference leaves it
  // untyped, as it may be invalid for these shapes. Null: always live.
  std::function<bool(const InferContext& ctx, const std::string& attr)>
      subgraph_is_live;

  const AttrSpec* find_attr(const std::string& attr_name) const;
  // "seqrt::SelectiveScan" or "MatMul".
  std::string qualified_name() const;
};

// Checks a node against its schema: input/output counts, required inputs,
// attribute names, types, required attributes and allowed string values.
Status check_node(const Node& node, const OpSchema& schema);

}  // namespace seqrt
