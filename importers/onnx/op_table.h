// The ONNX op table: which (domain, op type, opset) we import and how.
//
// Our ops follow the latest ONNX semantics. Each entry names the first
// opset (within 13-27) from which an ONNX op version imports with a given
// conversion; a model at opset N uses the entry with the largest
// since-opset <= N. An op version that differs from the latest is
// converted (attributes that later became inputs become constant inputs).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

inline constexpr int kMinOnnxOpset = 13;
inline constexpr int kMaxOnnxOpset = 27;

// Adds a constant to the graph under construction and returns its value;
// `hint` seeds the fresh name.
using AddConstantFn = std::function<ValueId(Tensor, const std::string& hint)>;

// Rewrites a node of an older op version into the latest form.
using UpgradeFn = Status (*)(Node& node, const AddConstantFn& add_constant);

struct OnnxOpVersion {
  const char* domain;  // "" for ai.onnx
  const char* op;
  int since_opset;
  UpgradeFn upgrade;  // nullptr: imports unchanged
};

// "" for "ai.onnx" and "", else the domain itself.
std::string normalize_domain(const std::string& domain);

// The table entry for `op` of (normalized) `domain` at `opset`, or nullptr.
// seqrt-domain ops are not in the table: they import unchanged whenever the
// registry has them.
const OnnxOpVersion* find_onnx_op(const std::string& domain,
                                  const std::string& op, int opset);

}  // namespace seqrt
