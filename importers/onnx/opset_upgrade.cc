#include "importers/onnx/opset_upgrade.h"

#include <exception>
#include <set>
#include <string>

#include "importers/onnx/op_table.h"
#include "onnx/checker.h"
#include "onnx/version_converter/convert.h"

namespace seqrt {
namespace {

// Whether every name `graph` reads (node inputs, graph outputs) is defined
// before it is read, in the graph or the scopes around it, recursively
// through subgraph attributes. The version converter dereferences what it
// looks up without checking, and the ONNX checker does not check outputs.
bool names_resolve(const onnx::GraphProto& graph,
                   std::set<std::string> defined) {
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& node : graph.node()) {
    for (const std::string& name : node.input()) {
      if (!name.empty() && defined.count(name) == 0) return false;
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && !names_resolve(attr.g(), defined)) return false;
      for (const auto& sub : attr.graphs()) {
        if (!names_resolve(sub, defined)) return false;
      }
    }
    for (const std::string& name : node.output()) defined.insert(name);
  }
  for (const auto& output : graph.output()) {
    if (defined.count(output.name()) == 0) return false;
  }
  return true;
}

int onnx_opset(const onnx::ModelProto& model) {
  for (const auto& entry : model.opset_import()) {
    if (normalize_domain(entry.domain()).empty()) {
      return static_cast<int>(entry.version());
    }
  }
  return -1;
}

}  // namespace

Status upgrade_old_opset(onnx::ModelProto& model, const std::string& source) {
  const int opset = onnx_opset(model);
  if (opset < kOldestConvertedOpset || opset >= kMinOnnxOpset) {
    return Status::ok();
  }
  if (!names_resolve(model.graph(), {})) {
    return invalid_model(
        "{} uses ONNX opset {} and reads a name that no input, initializer "
        "or earlier node defines, so it cannot be converted to opset {}",
        source, opset, kMinOnnxOpset);
  }
  try {
    // The converter trusts its input (a dangling name or a bad attribute
    // crashes it): the ONNX checker must accept the model first.
    onnx::checker::check_model(model);
    model = onnx::version_conversion::ConvertVersion(model, kMinOnnxOpset);
  } catch (const std::exception& e) {
    // The checker's and the converter's messages name the node or the op
    // they could not handle.
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) {
      what.pop_back();
    }
    for (char& c : what) {
      if (c == '\n') c = ' ';
    }
    return unsupported(
        "{} uses ONNX opset {}; converting it to opset {} failed: {}", source,
        opset, kMinOnnxOpset, what);
  }
  return Status::ok();
}

}  // namespace seqrt
