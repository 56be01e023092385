// Pieces shared by the sequence ops' contracts (selective_scan.h, ssd.h,
// ...) and their kernels: the Mamba softplus, and the dim binder and input
// types that one check per op takes, so inference (symbolic dims), the
// reference and CPU kernels (tensors), the Vulkan recorder and the CUDA
// launcher and planner (concrete dims) can never disagree on what a valid
// node is.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "ops/op_context.h"

namespace seqrt {

// Mamba's softplus: log1p(exp(x)) up to 20, x itself beyond (where the two
// agree to float precision and exp would only lose it).
inline double mamba_softplus(double x) {
  return x <= 20.0 ? std::log1p(std::exp(x)) : x;
}
inline float mamba_softplus(float x) {
  return x <= 20.0f ? std::log1p(std::exp(x)) : x;
}

// Binds named dims ("B", "D", "L") across an op's inputs. Each input is
// checked against a list of dim names: the first input that fixes a name
// sets it, later ones must agree. Symbolic dims agree with anything except
// a different fixed size where the same symbol was fixed before; a fixed
// size replaces a symbol so outputs get the most precise shape.
class DimBinder {
 public:
  // Errors are prefixed with the node's label: "[SSD] node 'x': ...".
  explicit DimBinder(const Node& node) : node_(node) {}
  explicit DimBinder(const OpContext& ctx) : node_(ctx.node()) {}

  // Checks `shape` (absent: rank unknown, nothing to check) against the
  // dims `names` and binds them; the error names `what` and the expected
  // shape: "A must be (D,N) = (64,16), got (64,8)".
  Status expect(const std::string& what, const std::optional<Shape>& shape,
                const std::vector<std::string>& names);

  // The bound dim, or unknown.
  Dim dim(const std::string& name) const;
  // Its size when fixed, else -1.
  int64_t size(const std::string& name) const { return dim(name).value(); }
  Shape shape(const std::vector<std::string>& names) const;

  // `name` (when fixed) is a positive multiple of `divisor_name` (when
  // fixed); "D = 6 must be a multiple of G = 4".
  Status expect_multiple(const std::string& name,
                         const std::string& divisor_name) const;

 private:
  std::string expected(const Shape& got,
                       const std::vector<std::string>& names) const;

  const Node& node_;
  std::map<std::string, Dim> dims_;
};

// Concrete shapes of a kernel's inputs for DimBinder (nullopt when the
// optional input is omitted).
std::optional<Shape> shape_of(const Tensor* tensor);

// Shapes and dtypes of a node's first `count` inputs, in the form the
// shared checks take (nullopt / kUndefined for omitted inputs), whoever
// has them: inference, a kernel's tensors, or a backend's planned dims.
struct KernelInputTypes {
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
};
KernelInputTypes kernel_input_types(const KernelContext& ctx, size_t count);
KernelInputTypes infer_input_types(const InferContext& ctx, size_t count);
// From planned dims; an input whose dtype is kUndefined is omitted.
KernelInputTypes dims_input_types(const std::vector<std::vector<int64_t>>& dims,
                                  const std::vector<DType>& dtypes,
                                  size_t count);

// The error of a contract check about `node`, prefixed like OpContext's.
template <typename... Args>
Status node_error(const Node& node, fmt::format_string<Args...> format,
                  Args&&... args) {
  return Status(
      StatusCode::kInvalidArgument,
      node.label() + ": " + fmt::format(format, std::forward<Args>(args)...));
}

// The concrete dims of input i (empty when omitted), or an error naming
// input `name` when a shape is not fixed (checks that need sizes).
Result<std::vector<int64_t>> fixed_input_dims(const Node& node,
                                              const KernelInputTypes& types,
                                              size_t i, const char* name);

// The first `required` inputs are present: "input 'dt' is required". The
// graph's check does this before inference; backends that record from
// dims call the op's check, which calls this.
Status check_required_inputs(const Node& node, const KernelInputTypes& types,
                             const char* const* names, size_t required);

// Every present input is a float type; the error names the input by
// `names[i]`: "input 'u' must be {f16,bf16,f32,f64}, got i32".
Status check_float_inputs(const Node& node, const KernelInputTypes& types,
                          const char* const* names);

// Dtype of a present_state output: past_state's when given, else f32
// (OPS.md: state stays fp32).
inline DType state_dtype(DType past_dtype) {
  return past_dtype == DType::kUndefined ? DType::kF32 : past_dtype;
}

// All elements of a tensor as doubles (empty for an omitted input), so the
// reference kernels read each element once and then use plain loops.
std::vector<double> to_f64(const Tensor* tensor);
// Stores `values` into `out` converted to its dtype.
void store_f64(const std::vector<double>& values, Tensor& out);

}  // namespace seqrt
