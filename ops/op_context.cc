#include "ops/op_context.h"

#include "ops/op_schema.h"

namespace seqrt {

const Attribute& OpContext::attr(const std::string& name) const {
  if (const Attribute* value = node_.attr(name)) return *value;
  const AttrSpec* spec = schema_.find_attr(name);
  assert(spec != nullptr && spec->default_value.has_value() &&
         "attribute read without a value or default; check has_attr()");
  return *spec->default_value;
}

bool OpContext::has_attr(const std::string& name) const {
  if (node_.attr(name) != nullptr) return true;
  const AttrSpec* spec = schema_.find_attr(name);
  return spec != nullptr && spec->default_value.has_value();
}

int64_t OpContext::attr_int(const std::string& name) const {
  return attr(name).as_int();
}
float OpContext::attr_float(const std::string& name) const {
  return attr(name).as_float();
}
const std::string& OpContext::attr_string(const std::string& name) const {
  return attr(name).as_string();
}
const std::vector<int64_t>& OpContext::attr_ints(
    const std::string& name) const {
  return attr(name).as_ints();
}
const std::vector<float>& OpContext::attr_floats(
    const std::string& name) const {
  return attr(name).as_floats();
}
const std::vector<std::string>& OpContext::attr_strings(
    const std::string& name) const {
  return attr(name).as_strings();
}
const Tensor& OpContext::attr_tensor(const std::string& name) const {
  return attr(name).as_tensor();
}
const std::shared_ptr<Graph>& OpContext::attr_graph(
    const std::string& name) const {
  return attr(name).as_graph();
}

Result<Tensor*> KernelContext::allocate_output(size_t i, DType dtype,
                                               std::vector<int64_t> dims) {
  if (check_) SEQRT_RETURN_IF_ERROR(check_(i, dtype, dims));
  if (placer_) {
    Tensor placed = placer_(i, dtype, dims);
    if (!placed.empty()) {
      outputs_[i] = std::move(placed);
      return &outputs_[i];
    }
  }
  Result<Tensor> tensor = Tensor::allocate(dtype, std::move(dims));
  if (!tensor.is_ok()) return tensor.status().with_context(node().label());
  outputs_[i] = std::move(tensor).value();
  return &outputs_[i];
}

std::optional<Tensor> KernelContext::take_input(size_t i) {
  if (i >= donations_.size() || donations_[i] == nullptr ||
      !donations_[i]->is_sole_owner()) {
    return std::nullopt;
  }
  Tensor taken = std::move(*donations_[i]);
  *donations_[i] = Tensor();
  donations_[i] = nullptr;
  return taken;
}

std::optional<std::vector<DimExpr>> InferContext::input_symbolic(
    size_t i) const {
  if (i >= inputs_.size()) return std::nullopt;
  const ValueInfo& info = inputs_[i];
  if (info.dtype != DType::kI64 && info.dtype != DType::kI32) {
    return std::nullopt;
  }
  if (const Tensor* value = info.value) {
    if (value->rank() > 1 || value->num_elements() > kMaxSymbolicElements) {
      return std::nullopt;
    }
    std::vector<DimExpr> out;
    for (int64_t k = 0; k < value->num_elements(); ++k) {
      out.emplace_back(value->element_i64(k));
    }
    return out;
  }
  return info.symbolic;
}

}  // namespace seqrt
