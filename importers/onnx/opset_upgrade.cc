#include "importers/onnx/opset_upgrade.h"

#include <exception>

#include "importers/onnx/op_table.h"
#include "onnx/version_converter/convert.h"

namespace seqrt {
namespace {

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
  try {
    model = onnx::version_conversion::ConvertVersion(model, kMinOnnxOpset);
  } catch (const std::exception& e) {
    // The converter's messages name the op it has no adapter for.
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
