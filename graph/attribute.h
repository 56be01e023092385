// Node attributes: typed values, as in ONNX.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor.h"

namespace seqrt {

struct Graph;

// The numeric values are part of the .seqrt format: only append.
enum class AttrType : uint8_t {
  kInt = 1,
  kFloat = 2,
  kString = 3,
  kInts = 4,
  kFloats = 5,
  kStrings = 6,
  kTensor = 7,
  kGraph = 8,
};

const char* attr_type_name(AttrType type);  // "int", "floats", "graph", ...

class Attribute {
 public:
  Attribute() = default;                                           // int 0
  Attribute(int64_t v) : value_(v) {}                              // NOLINT
  Attribute(int v) : value_(int64_t{v}) {}                         // NOLINT
  Attribute(float v) : value_(v) {}                                // NOLINT
  Attribute(double v) : value_(static_cast<float>(v)) {}           // NOLINT
  Attribute(std::string v) : value_(std::move(v)) {}               // NOLINT
  Attribute(const char* v) : value_(std::string(v)) {}             // NOLINT
  Attribute(std::vector<int64_t> v) : value_(std::move(v)) {}      // NOLINT
  Attribute(std::vector<float> v) : value_(std::move(v)) {}        // NOLINT
  Attribute(std::vector<std::string> v) : value_(std::move(v)) {}  // NOLINT
  Attribute(Tensor v) : value_(std::move(v)) {}                    // NOLINT
  Attribute(std::shared_ptr<Graph> v) : value_(std::move(v)) {}    // NOLINT

  AttrType type() const;

  int64_t as_int() const { return std::get<int64_t>(value_); }
  float as_float() const { return std::get<float>(value_); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  const std::vector<int64_t>& as_ints() const {
    return std::get<std::vector<int64_t>>(value_);
  }
  const std::vector<float>& as_floats() const {
    return std::get<std::vector<float>>(value_);
  }
  const std::vector<std::string>& as_strings() const {
    return std::get<std::vector<std::string>>(value_);
  }
  const Tensor& as_tensor() const { return std::get<Tensor>(value_); }
  const std::shared_ptr<Graph>& as_graph() const {
    return std::get<std::shared_ptr<Graph>>(value_);
  }

  // Deep equality (tensors by bytes, subgraphs structurally).
  bool equals(const Attribute& other) const;
  // Short text form for printers and error messages.
  std::string to_string() const;

 private:
  std::variant<int64_t, float, std::string, std::vector<int64_t>,
               std::vector<float>, std::vector<std::string>, Tensor,
               std::shared_ptr<Graph>>
      value_;
};

// Sorted by name so that printing and writing are deterministic.
using AttrMap = std::map<std::string, Attribute>;

}  // namespace seqrt
