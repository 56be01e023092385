#include "graph/attribute.h"

#include <fmt/format.h>

#include "graph/graph.h"

namespace seqrt {

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kInts:
      return "ints";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensor:
      return "tensor";
    case AttrType::kGraph:
      return "graph";
  }
  return "unknown";
}

AttrType Attribute::type() const {
  return static_cast<AttrType>(value_.index() + 1);
}

bool Attribute::equals(const Attribute& other) const {
  if (type() != other.type()) return false;
  switch (type()) {
    case AttrType::kTensor:
      return as_tensor().same_as(other.as_tensor());
    case AttrType::kGraph: {
      const auto& a = as_graph();
      const auto& b = other.as_graph();
      if (!a || !b) return a == b;
      return graphs_equal(*a, *b);
    }
    case AttrType::kInt:
      return as_int() == other.as_int();
    case AttrType::kFloat:
      return as_float() == other.as_float();
    case AttrType::kString:
      return as_string() == other.as_string();
    case AttrType::kInts:
      return as_ints() == other.as_ints();
    case AttrType::kFloats:
      return as_floats() == other.as_floats();
    case AttrType::kStrings:
      return as_strings() == other.as_strings();
  }
  return false;
}

std::string Attribute::to_string() const {
  switch (type()) {
    case AttrType::kInt:
      return std::to_string(as_int());
    case AttrType::kFloat:
      return fmt::format("{}", as_float());
    case AttrType::kString:
      return fmt::format("\"{}\"", as_string());
    case AttrType::kInts:
      return fmt::format("[{}]", fmt::join(as_ints(), ","));
    case AttrType::kFloats:
      return fmt::format("[{}]", fmt::join(as_floats(), ","));
    case AttrType::kStrings: {
      std::string out = "[";
      for (size_t i = 0; i < as_strings().size(); ++i) {
        out += (i ? ",\"" : "\"") + as_strings()[i] + "\"";
      }
      return out + "]";
    }
    case AttrType::kTensor:
      return fmt::format("tensor<{}{}>", dtype_name(as_tensor().dtype()),
                         dims_to_string(as_tensor().dims()));
    case AttrType::kGraph:
      return fmt::format("graph '{}'", as_graph() ? as_graph()->name : "");
  }
  return "?";
}

}  // namespace seqrt
