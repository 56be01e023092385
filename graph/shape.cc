#include "graph/shape.h"

namespace seqrt {

Dim::Dim(int64_t value) : value_(value < 0 ? -1 : value) {}

Dim Dim::symbol(std::string name) {
  Dim dim;
  dim.symbol_ = std::move(name);
  return dim;
}

std::string Dim::to_string() const {
  if (is_fixed()) return std::to_string(value_);
  if (is_symbol()) return symbol_;
  return "?";
}

Shape Shape::from_dims(const std::vector<int64_t>& dims) {
  std::vector<Dim> out(dims.begin(), dims.end());
  return Shape(std::move(out));
}

bool Shape::is_fixed() const {
  for (const Dim& dim : dims_) {
    if (!dim.is_fixed()) return false;
  }
  return true;
}

std::vector<int64_t> Shape::fixed_dims() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& dim : dims_) out.push_back(dim.value());
  return out;
}

std::string Shape::to_string() const {
  std::string out = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ",";
    out += dims_[i].to_string();
  }
  return out + ")";
}

Result<int64_t> checked_num_elements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) {
      return invalid_argument("negative dim in shape {}", dims_to_string(dims));
    }
    if (dim == 0) return int64_t{0};
  }
  for (int64_t dim : dims) {
    if (count > kMaxElements / dim) {
      return make_error(StatusCode::kLimitExceeded,
                        "shape {} has more than 2^48 elements",
                        dims_to_string(dims));
    }
    count *= dim;
  }
  return count;
}

std::string dims_to_string(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + ")";
}

}  // namespace seqrt
