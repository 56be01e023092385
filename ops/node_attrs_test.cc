// node_attrs reads the schema's defaults, so backends need not restate them.
#include "ops/node_attrs.h"

#include <gtest/gtest.h>

#include "ops/registry.h"

namespace seqrt {
namespace {

Node node_of(const std::string& op, AttrMap attrs) {
  Node node;
  node.name = "n0";
  node.op = op;
  node.domain = kOnnxDomain;
  node.attrs = std::move(attrs);
  return node;
}

// The default a schema declares for `attr` of `op`.
const Attribute& schema_default(const std::string& op,
                                const std::string& attr) {
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, op);
  EXPECT_NE(schema, nullptr) << op;
  const AttrSpec* spec = schema->find_attr(attr);
  EXPECT_TRUE(spec != nullptr && spec->default_value.has_value()) << attr;
  return *spec->default_value;
}

TEST(NodeAttrs, UnsetAttributesTakeTheSchemaDefault) {
  Node norm = node_of("LayerNormalization", {});
  EXPECT_EQ(node_attr_float(norm, "epsilon"),
            schema_default("LayerNormalization", "epsilon").as_float());
  EXPECT_FLOAT_EQ(node_attr_float(norm, "epsilon"), 1e-5f);  // ONNX's
  EXPECT_EQ(node_attr_int(norm, "axis"), -1);
  Node trilu = node_of("Trilu", {});
  EXPECT_EQ(node_attr_int(trilu, "upper"), 1);
  Node pad = node_of("Pad", {});
  EXPECT_EQ(node_attr_string(pad, "mode"), "constant");
}

TEST(NodeAttrs, SetAttributesWin) {
  Node gemm = node_of("Gemm", {{"alpha", Attribute(0.5f)}});
  EXPECT_EQ(node_attr_float(gemm, "alpha"), 0.5f);
  EXPECT_EQ(node_attr_float(gemm, "beta"), 1.0f);
  Node trilu = node_of("Trilu", {{"upper", Attribute(int64_t{0})}});
  EXPECT_EQ(node_attr_int(trilu, "upper"), 0);
  EXPECT_FALSE(node_attrs(node_of("Transpose", {})).has_attr("perm"));
}

}  // namespace
}  // namespace seqrt
