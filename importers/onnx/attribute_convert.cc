#include "importers/onnx/attribute_convert.h"

#include <vector>

#include "importers/onnx/tensor_convert.h"

namespace seqrt {

using onnx::AttributeProto;

Result<Attribute> convert_attribute(const AttributeProto& proto,
                                    const std::string& node_label,
                                    const std::string& model_dir,
                                    const SubgraphFn& convert_subgraph) {
  const std::string what =
      fmt::format("{}: attribute '{}'", node_label, proto.name());
  switch (proto.type()) {
    case AttributeProto::INT:
      return Attribute(int64_t{proto.i()});
    case AttributeProto::FLOAT:
      return Attribute(proto.f());
    case AttributeProto::STRING:
      return Attribute(proto.s());
    case AttributeProto::INTS:
      return Attribute(
          std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
    case AttributeProto::FLOATS:
      return Attribute(
          std::vector<float>(proto.floats().begin(), proto.floats().end()));
    case AttributeProto::STRINGS:
      return Attribute(std::vector<std::string>(proto.strings().begin(),
                                                proto.strings().end()));
    case AttributeProto::TENSOR: {
      SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                             tensor_from_proto(proto.t(), model_dir, what));
      return Attribute(std::move(tensor));
    }
    case AttributeProto::GRAPH: {
      Result<std::shared_ptr<Graph>> graph = convert_subgraph(proto.g());
      if (!graph.is_ok()) return graph.status().with_context(what);
      return Attribute(std::move(graph).value());
    }
    default:
      break;
  }
  return unsupported(
      "{} has type {}, which is not supported (expected int, float, string, "
      "ints, floats, strings, tensor or graph)",
      what, AttributeProto::AttributeType_Name(proto.type()));
}

}  // namespace seqrt
