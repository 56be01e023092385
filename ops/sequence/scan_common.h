// Pieces shared by the state-space ops (SelectiveScan, SSD,
// CausalConvWithState) and their CPU kernels: the Mamba softplus, and one
// shape check that both inference (symbolic dims) and kernels (concrete
// dims) use, so the two can never disagree on what a valid node is.
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
  explicit DimBinder(const OpContext& ctx) : ctx_(ctx) {}

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

  const OpContext& ctx_;
  std::map<std::string, Dim> dims_;
};

// Concrete shapes of a kernel's inputs for DimBinder (nullopt when the
// optional input is omitted).
std::optional<Shape> shape_of(const Tensor* tensor);

// Shapes and dtypes of a kernel's first `count` inputs, in the form the
// shared checks take (nullopt / kUndefined for omitted inputs).
struct KernelInputTypes {
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
};
KernelInputTypes kernel_input_types(const KernelContext& ctx, size_t count);

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

// Sizes of a validated node, from its concrete inputs; the CPU kernels
// call these before touching any data, the reference kernels likewise.
struct SelectiveScanDims {
  int64_t batch, channels, length, state, groups;
};
// Inputs u, delta, A, Bm, Cm, Dskip?, z?, delta_bias?, past_state?.
Result<SelectiveScanDims> check_selective_scan(const KernelContext& ctx);

struct SsdDims {
  int64_t batch, length, heads, head_dim, groups, state;
};
// Inputs x, dt, A, Bm, Cm, D?, z?, dt_bias?, past_state?.
Result<SsdDims> check_ssd(const KernelContext& ctx);

struct CausalConvDims {
  int64_t batch, channels, length, kernel;
};
// Inputs input, weight, bias?, past_state?.
Result<CausalConvDims> check_causal_conv(const KernelContext& ctx);

}  // namespace seqrt
