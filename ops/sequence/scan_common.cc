#include "ops/sequence/scan_common.h"

#include <fmt/format.h>

#include "ops/type_support.h"

namespace seqrt {
namespace {

// Two dims that cannot be the same size.
bool conflict(const Dim& a, const Dim& b) {
  return a.is_fixed() && b.is_fixed() && a.value() != b.value();
}

}  // namespace

Status DimBinder::expect(const std::string& what,
                         const std::optional<Shape>& shape,
                         const std::vector<std::string>& names) {
  if (!shape.has_value()) return Status::ok();
  if (shape->rank() != names.size()) {
    return node_error(node_, "{} must be ({}), rank {}, got {}", what,
                      fmt::join(names, ","), names.size(), shape->to_string());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = dims_.find(names[i]);
    if (it != dims_.end() && conflict(it->second, (*shape)[i])) {
      return node_error(node_, "{} must be ({}) = {}, got {}", what,
                        fmt::join(names, ","), expected(*shape, names),
                        shape->to_string());
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const Dim& got = (*shape)[i];
    auto it = dims_.find(names[i]);
    if (it == dims_.end()) {
      dims_[names[i]] = got;
    } else if (!it->second.is_fixed() && !got.is_unknown()) {
      it->second = got;
    }
  }
  return Status::ok();
}

std::string DimBinder::expected(const Shape& got,
                                const std::vector<std::string>& names) const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = dims_.find(names[i]);
    parts.push_back(it != dims_.end() ? it->second.to_string()
                                      : got[i].to_string());
  }
  return fmt::format("({})", fmt::join(parts, ","));
}

Dim DimBinder::dim(const std::string& name) const {
  auto it = dims_.find(name);
  return it == dims_.end() ? Dim::unknown() : it->second;
}

Shape DimBinder::shape(const std::vector<std::string>& names) const {
  std::vector<Dim> dims;
  for (const std::string& name : names) dims.push_back(dim(name));
  return Shape(std::move(dims));
}

Status DimBinder::expect_multiple(const std::string& name,
                                  const std::string& divisor_name) const {
  int64_t value = size(name);
  int64_t divisor = size(divisor_name);
  if (divisor == 0)
    return node_error(node_, "{} must be at least 1", divisor_name);
  if (value < 0 || divisor < 0) return Status::ok();
  if (value % divisor != 0) {
    return node_error(node_, "{} = {} must be a multiple of {} = {}", name,
                      value, divisor_name, divisor);
  }
  return Status::ok();
}

std::optional<Shape> shape_of(const Tensor* tensor) {
  if (tensor == nullptr) return std::nullopt;
  return tensor->shape();
}

KernelInputTypes kernel_input_types(const KernelContext& ctx, size_t count) {
  KernelInputTypes types;
  for (size_t i = 0; i < count; ++i) {
    const Tensor* tensor = ctx.input(i);
    types.shapes.push_back(shape_of(tensor));
    types.dtypes.push_back(tensor ? tensor->dtype() : DType::kUndefined);
  }
  return types;
}

KernelInputTypes infer_input_types(const InferContext& ctx, size_t count) {
  KernelInputTypes types;
  for (size_t i = 0; i < count; ++i) {
    const bool present = ctx.has_input(i);
    types.shapes.push_back(present ? ctx.input_shape(i) : std::nullopt);
    types.dtypes.push_back(present ? ctx.input_dtype(i) : DType::kUndefined);
  }
  return types;
}

KernelInputTypes dims_input_types(const std::vector<std::vector<int64_t>>& dims,
                                  const std::vector<DType>& dtypes,
                                  size_t count) {
  KernelInputTypes types;
  for (size_t i = 0; i < count; ++i) {
    const bool present =
        i < dtypes.size() && i < dims.size() && dtypes[i] != DType::kUndefined;
    types.shapes.push_back(present
                               ? std::optional<Shape>(Shape::from_dims(dims[i]))
                               : std::nullopt);
    types.dtypes.push_back(present ? dtypes[i] : DType::kUndefined);
  }
  return types;
}

Result<std::vector<int64_t>> fixed_input_dims(const Node& node,
                                              const KernelInputTypes& types,
                                              size_t i, const char* name) {
  const std::optional<Shape>& shape = types.shapes[i];
  if (!shape.has_value()) return std::vector<int64_t>{};
  if (!shape->is_fixed()) {
    return node_error(node, "input '{}' needs known dims, got {}", name,
                      shape->to_string());
  }
  return shape->fixed_dims();
}

Status check_required_inputs(const Node& node, const KernelInputTypes& types,
                             const char* const* names, size_t required) {
  for (size_t i = 0; i < required; ++i) {
    if (i >= types.dtypes.size() || types.dtypes[i] == DType::kUndefined) {
      return node_error(node, "input '{}' is required", names[i]);
    }
  }
  return Status::ok();
}

Status check_float_inputs(const Node& node, const KernelInputTypes& types,
                          const char* const* names) {
  for (size_t i = 0; i < types.dtypes.size(); ++i) {
    const DType dtype = types.dtypes[i];
    if (dtype == DType::kUndefined || kFloatTypes.contains(dtype)) continue;
    return node_error(node, "input '{}' must be {}, got {}", names[i],
                      kFloatTypes.to_string(), dtype_name(dtype));
  }
  return Status::ok();
}

std::vector<double> to_f64(const Tensor* tensor) {
  std::vector<double> values;
  if (tensor == nullptr) return values;
  values.resize(static_cast<size_t>(tensor->num_elements()));
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    values[static_cast<size_t>(i)] = tensor->element_f64(i);
  }
  return values;
}

void store_f64(const std::vector<double>& values, Tensor& out) {
  for (size_t i = 0; i < values.size(); ++i) {
    out.set_element_f64(static_cast<int64_t>(i), values[i]);
  }
}

}  // namespace seqrt
