// Shapes of values: each dim is a fixed size, a named symbol ("batch",
// "seq") or unknown. Tensors (graph/tensor.h) always have concrete dims.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt {

class Dim {
 public:
  Dim() = default;     // unknown
  Dim(int64_t value);  // NOLINT: fixed size, implicit by design
  static Dim symbol(std::string name);
  static Dim unknown() { return Dim(); }

  bool is_fixed() const { return value_ >= 0; }
  bool is_symbol() const { return value_ < 0 && !symbol_.empty(); }
  bool is_unknown() const { return value_ < 0 && symbol_.empty(); }
  int64_t value() const { return value_; }  // -1 unless fixed
  const std::string& symbol_name() const { return symbol_; }

  std::string to_string() const;  // "64", "seq" or "?"
  bool operator==(const Dim& other) const {
    return value_ == other.value_ && symbol_ == other.symbol_;
  }
  bool operator!=(const Dim& other) const { return !(*this == other); }

 private:
  int64_t value_ = -1;
  std::string symbol_;
};

// A shape of known rank. An unknown rank is std::optional<Shape>{} in Value.
class Shape {
 public:
  Shape() = default;                                        // rank 0: a scalar
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}  // NOLINT
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}
  static Shape from_dims(const std::vector<int64_t>& dims);

  size_t rank() const { return dims_.size(); }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }

  bool is_fixed() const;  // every dim fixed
  // Concrete dims; only valid when is_fixed().
  std::vector<int64_t> fixed_dims() const;
  std::string to_string() const;  // "(batch,seq,64)"

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return !(*this == other); }

 private:
  std::vector<Dim> dims_;
};

// Largest element count a tensor may have; shape arithmetic past it is an
// error, so byte sizes never overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

// Product of dims, checked: negative dims and overflow past kMaxElements are
// errors.
Result<int64_t> checked_num_elements(const std::vector<int64_t>& dims);

std::string dims_to_string(const std::vector<int64_t>& dims);  // "(2,3)"

}  // namespace seqrt
