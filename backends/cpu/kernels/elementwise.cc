// CPU kernels of the elementwise math ops: binary arithmetic with numpy
// broadcasting (Add, Sub, Mul, Div, Max, Min, Sum, Pow, Mod) and the unary
// math and activations. For f32 the work is vectorised runs over the
// innermost coalesced dimension (same-shape, scalar and row broadcasts are
// one or few runs), spread over threads; f16/bf16 are converted at the
// edges. f64 and integer inputs go to elementwise_typed.cc. f32 unary ops
// and two-input Add/Sub/Mul/Div go to oneDNN's eltwise and binary
// primitives where the measurement chose them (../onednn/selection.h);
// Max and Min stay here: oneDNN does not propagate NaN as the reference.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/elementwise_typed.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/onednn/binary.h"
#include "backends/cpu/onednn/eltwise.h"
#include "backends/cpu/onednn/selection.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Elements per parallel task: below this, threads cost more than they save.
constexpr int64_t kGrain = 16384;

// The output dims with, per input, strides that are 0 on broadcast axes,
// after merging neighbouring axes that both inputs read contiguously. The
// last axis is then the run each vector call handles; its strides are 0 or 1.
struct BroadcastPlan {
  std::vector<int64_t> out_dims;  // the op's output dims
  std::vector<int64_t> dims;      // coalesced; never empty
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
  int64_t num_elements = 1;
};

Result<BroadcastPlan> plan_broadcast(const KernelContext& ctx,
                                     const std::vector<int64_t>& a,
                                     const std::vector<int64_t>& b) {
  BroadcastPlan plan;
  SEQRT_ASSIGN_OR_RETURN(plan.out_dims, broadcast_dims(ctx, a, b));
  std::vector<int64_t> sa = broadcast_strides(a, plan.out_dims);
  std::vector<int64_t> sb = broadcast_strides(b, plan.out_dims);
  for (size_t i = 0; i < plan.out_dims.size(); ++i) {
    int64_t d = plan.out_dims[i];
    plan.num_elements *= d;
    if (d == 1) continue;
    if (!plan.dims.empty()) {
      int64_t inner = plan.out_dims[i];
      // Merge axis i into the previous one when both inputs step through
      // the pair as through one axis.
      bool merge = plan.a_strides.back() == sa[i] * inner &&
                   plan.b_strides.back() == sb[i] * inner;
      if (merge) {
        plan.dims.back() *= d;
        plan.a_strides.back() = sa[i];
        plan.b_strides.back() = sb[i];
        continue;
      }
    }
    plan.dims.push_back(d);
    plan.a_strides.push_back(sa[i]);
    plan.b_strides.push_back(sb[i]);
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    plan.a_strides = {0};
    plan.b_strides = {0};
  }
  return plan;
}

// Calls run(a_offset, b_offset, out_offset) for every run of the plan's
// last axis, in parallel over the runs.
template <typename Run>
void for_each_run(const BroadcastPlan& plan, Run&& run) {
  int64_t length = plan.dims.back();
  int64_t runs = length == 0 ? 0 : plan.num_elements / length;
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(length, 1));
  size_t outer = plan.dims.size() - 1;
  auto chunk = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r;
      int64_t a_offset = 0;
      int64_t b_offset = 0;
      for (size_t i = outer; i-- > 0;) {
        int64_t index = rest % plan.dims[i];
        rest /= plan.dims[i];
        a_offset += index * plan.a_strides[i];
        b_offset += index * plan.b_strides[i];
      }
      run(a_offset, b_offset, r * length);
    }
  };
  // One chunk runs here: entering an OpenMP region costs more than a small
  // op itself (the step of a Scan body, run thousands of times).
  if (runs <= grain) {
    chunk(0, runs);
    return;
  }
  parallel_chunks(runs, grain, chunk);
}

// a op b into a new tensor, or, when `dtype` is given, into the node's
// output (which may be a or b itself when the plan runs the op in place:
// each element is read before it is written).
Result<Tensor> apply_binary(KernelContext& ctx, BinaryKind kind,
                            const Tensor& a, const Tensor& b,
                            DType dtype = DType::kUndefined) {
  SEQRT_ASSIGN_OR_RETURN(BroadcastPlan plan,
                         plan_broadcast(ctx, a.dims(), b.dims()));
  Result<Tensor> allocated = dtype == DType::kUndefined
                                 ? Tensor::allocate(DType::kF32, plan.out_dims)
                                 : f32_output(ctx, 0, dtype, plan.out_dims);
  SEQRT_ASSIGN_OR_RETURN(Tensor out, std::move(allocated));
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  float* po = out.mutable_data_as<float>();
  size_t length = static_cast<size_t>(plan.dims.back());
  size_t a_step = static_cast<size_t>(plan.a_strides.back());
  size_t b_step = static_cast<size_t>(plan.b_strides.back());
  for_each_run(plan, [&](int64_t ao, int64_t bo, int64_t oo) {
    binary_f32(kind, pa + ao, a_step, pb + bo, b_step, po + oo, length);
  });
  return out;
}

std::optional<onednn::Binary> onednn_binary_of(BinaryKind kind) {
  switch (kind) {
    case BinaryKind::kAdd:
      return onednn::Binary::kAdd;
    case BinaryKind::kSub:
      return onednn::Binary::kSub;
    case BinaryKind::kMul:
      return onednn::Binary::kMul;
    case BinaryKind::kDiv:
      return onednn::Binary::kDiv;
    case BinaryKind::kMax:
    case BinaryKind::kMin:
      break;
  }
  return std::nullopt;
}

std::vector<int64_t> aligned_dims(const Tensor& t, size_t rank) {
  std::vector<int64_t> dims(rank - t.rank(), 1);
  dims.insert(dims.end(), t.dims().begin(), t.dims().end());
  return dims;
}

// oneDNN 2.6 has fast (jit) binary kernels for equal shapes, a scalar and
// a second operand broadcast over leading axes (a row vector); a second
// operand broadcast along the last axis (one value per row, as an RMS
// norm's Mul by its scale has) falls to its reference kernel, 40x slower
// than the own kernel on RetNet's (4,8,2048,64) x (4,8,2048,1).
bool onednn_broadcasts_fast(const std::vector<int64_t>& a_dims,
                            const std::vector<int64_t>& b_dims) {
  if (a_dims == b_dims) return true;
  bool scalar = std::all_of(b_dims.begin(), b_dims.end(),
                            [](int64_t d) { return d == 1; });
  return scalar || b_dims.back() == a_dims.back();
}

// Two f32 inputs on oneDNN's binary primitive, when the measurement chose
// it and the shapes are of the form oneDNN broadcasts: the first operand
// (or the second, for Add and Mul) has the output's shape. False: the own
// kernel runs the node.
Result<bool> run_onednn_binary(KernelContext& ctx, BinaryKind kind) {
  std::optional<onednn::Binary> op = onednn_binary_of(kind);
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  if (!op || a->dtype() != DType::kF32 || b->dtype() != DType::kF32) {
    return false;
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         broadcast_dims(ctx, a->dims(), b->dims()));
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (dims.empty() || count == 0 ||
      !onednn::use_onednn(onednn::OpClass::kBinary, count)) {
    return false;
  }
  std::vector<int64_t> a_dims = aligned_dims(*a, dims.size());
  std::vector<int64_t> b_dims = aligned_dims(*b, dims.size());
  const bool commutative = kind == BinaryKind::kAdd || kind == BinaryKind::kMul;
  if (a_dims != dims) {
    if (!commutative || b_dims != dims) return false;
    std::swap(a, b);
    std::swap(a_dims, b_dims);
  }
  if (!onednn_broadcasts_fast(a_dims, b_dims)) return false;
  SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, DType::kF32, dims));
  float* po = out.mutable_data_as<float>();
  // oneDNN may write dst over the first operand only.
  if (po == b->data_as<float>() && po != a->data_as<float>()) {
    if (!commutative) return false;
    std::swap(a, b);
    std::swap(a_dims, b_dims);
  }
  return onednn::binary(ctx.node().label(), *op, a_dims, a->data_as<float>(),
                        b_dims, b->data_as<float>(), po);
}

Status check_same_float_dtypes(const KernelContext& ctx) {
  SEQRT_RETURN_IF_ERROR(require_same_float_inputs(ctx));
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  return Status::ok();
}

// Folds the inputs left to right (Max, Min and Sum take one or more). f64
// and integer inputs go to the exact kernels of elementwise_typed.cc.
Status run_binary(KernelContext& ctx, BinaryKind kind) {
  if (ctx.has_input(0) && !is_f32_family(ctx.input(0)->dtype())) {
    return run_exact_binary(ctx, kind);
  }
  SEQRT_RETURN_IF_ERROR(check_same_float_dtypes(ctx));
  DType dtype = ctx.input(0)->dtype();
  if (ctx.num_inputs() == 2) {
    SEQRT_ASSIGN_OR_RETURN(bool ran, run_onednn_binary(ctx, kind));
    if (ran) return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor acc, load_f32(*ctx.input(0)));
  if (ctx.num_inputs() == 1) acc = acc.clone();
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(Tensor next, load_f32(*ctx.input(i)));
    const bool last = i + 1 == ctx.num_inputs();
    SEQRT_ASSIGN_OR_RETURN(acc, apply_binary(ctx, kind, acc, next,
                                             last ? dtype : DType::kUndefined));
  }
  return set_output_as(ctx, 0, acc, dtype);
}

// Pow in double, as the reference, so results round identically; x² (the
// common case) is one f32 multiply, which rounds the exact product the same.
Status run_pow(KernelContext& ctx) {
  const Tensor& base = *ctx.input(0);
  const Tensor& exponent = *ctx.input(1);
  if (!is_f32_family(base.dtype())) return run_exact_pow(ctx);
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(base));
  if (exponent.num_elements() == 1 && exponent.element_f64(0) == 2.0 &&
      exponent.rank() <= x.rank()) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor out, apply_binary(ctx, BinaryKind::kMul, x, x, base.dtype()));
    return set_output_as(ctx, 0, out, base.dtype());
  }
  std::vector<double> e(static_cast<size_t>(exponent.num_elements()));
  for (size_t i = 0; i < e.size(); ++i) {
    e[i] = exponent.element_f64(static_cast<int64_t>(i));
  }
  SEQRT_ASSIGN_OR_RETURN(BroadcastPlan plan,
                         plan_broadcast(ctx, x.dims(), exponent.dims()));
  SEQRT_ASSIGN_OR_RETURN(Tensor out,
                         f32_output(ctx, 0, base.dtype(), plan.out_dims));
  const float* px = x.data_as<float>();
  float* po = out.mutable_data_as<float>();
  int64_t length = plan.dims.back();
  int64_t x_step = plan.a_strides.back();
  int64_t e_step = plan.b_strides.back();
  for_each_run(plan, [&](int64_t xo, int64_t eo, int64_t oo) {
    for (int64_t j = 0; j < length; ++j) {
      po[oo + j] = static_cast<float>(std::pow(
          static_cast<double>(px[xo + j * x_step]), e[eo + j * e_step]));
    }
  });
  return set_output_as(ctx, 0, out, base.dtype());
}

std::optional<onednn::Eltwise> onednn_eltwise_of(UnaryKind kind) {
  switch (kind) {
    case UnaryKind::kRelu:
      return onednn::Eltwise::kRelu;
    case UnaryKind::kSigmoid:
      return onednn::Eltwise::kSigmoid;
    case UnaryKind::kTanh:
      return onednn::Eltwise::kTanh;
    case UnaryKind::kExp:
      return onednn::Eltwise::kExp;
    case UnaryKind::kLog:
      return onednn::Eltwise::kLog;
    case UnaryKind::kSqrt:
      return onednn::Eltwise::kSqrt;
    case UnaryKind::kNeg:
      return onednn::Eltwise::kNeg;
    case UnaryKind::kAbs:
      return onednn::Eltwise::kAbs;
    case UnaryKind::kReciprocal:
      return onednn::Eltwise::kReciprocal;
    case UnaryKind::kGeluExact:
      return onednn::Eltwise::kGeluErf;
    case UnaryKind::kGeluTanh:
      return onednn::Eltwise::kGeluTanh;
    case UnaryKind::kSoftplus:
      return onednn::Eltwise::kSoftplus;
    case UnaryKind::kErf:
      break;  // no oneDNN eltwise computes erf alone
  }
  return std::nullopt;
}

Status run_unary(KernelContext& ctx, UnaryKind kind, MathFn fn) {
  if (ctx.has_input(0) && !is_f32_family(ctx.input(0)->dtype())) {
    return run_exact_unary(ctx, fn);
  }
  SEQRT_RETURN_IF_ERROR(check_same_float_dtypes(ctx));
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor in, load_f32(x));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, x.dtype(), x.dims()));
  const float* px = in.data_as<float>();
  float* py = out.mutable_data_as<float>();
  std::optional<onednn::Eltwise> eltwise = onednn_eltwise_of(kind);
  if (eltwise && x.dtype() == DType::kF32 && x.num_elements() > 0 &&
      onednn::use_onednn(*eltwise, x.num_elements())) {
    SEQRT_ASSIGN_OR_RETURN(bool ran,
                           onednn::eltwise(ctx.node().label(), *eltwise,
                                           x.num_elements(), px, py));
    if (ran) return set_output_as(ctx, 0, out, x.dtype());
  }
  auto chunk = [&](int64_t begin, int64_t end) {
    unary_f32(kind, px + begin, py + begin, static_cast<size_t>(end - begin));
  };
  // One chunk runs here, without entering an OpenMP region (see above).
  if (x.num_elements() <= kGrain) {
    chunk(0, x.num_elements());
  } else {
    parallel_chunks(x.num_elements(), kGrain, chunk);
  }
  return set_output_as(ctx, 0, out, x.dtype());
}

Status run_gelu(KernelContext& ctx) {
  const std::string& approximate = ctx.attr_string("approximate");
  if (approximate != "none" && approximate != "tanh") {
    return ctx.error("approximate must be \"none\" or \"tanh\", got \"{}\"",
                     approximate);
  }
  if (approximate == "tanh") {
    return run_unary(ctx, UnaryKind::kGeluTanh, MathFn::kGeluTanh);
  }
  return run_unary(ctx, UnaryKind::kGeluExact, MathFn::kGeluExact);
}

struct BinaryEntry {
  const char* op;
  BinaryKind kind;
};

struct UnaryEntry {
  const char* op;
  UnaryKind kind;  // the Highway loop for f32/f16/bf16
  MathFn fn;       // the scalar form for f64 and integers
};

struct ExactUnaryEntry {
  const char* op;
  MathFn fn;
};

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  const BinaryEntry binaries[] = {
      {"Add", BinaryKind::kAdd}, {"Sub", BinaryKind::kSub},
      {"Mul", BinaryKind::kMul}, {"Div", BinaryKind::kDiv},
      {"Max", BinaryKind::kMax}, {"Min", BinaryKind::kMin},
      {"Sum", BinaryKind::kAdd},
  };
  for (const BinaryEntry& entry : binaries) {
    BinaryKind kind = entry.kind;
    table.add(CpuKernel{
        kOnnxDomain, entry.op,
        [kind](KernelContext& ctx) { return run_binary(ctx, kind); }, nullptr});
  }
  table.add(CpuKernel{kOnnxDomain, "Pow", run_pow, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Mod", run_mod, nullptr});
  const UnaryEntry unaries[] = {
      {"Relu", UnaryKind::kRelu, MathFn::kRelu},
      {"Sigmoid", UnaryKind::kSigmoid, MathFn::kSigmoid},
      {"Tanh", UnaryKind::kTanh, MathFn::kTanh},
      {"Exp", UnaryKind::kExp, MathFn::kExp},
      {"Log", UnaryKind::kLog, MathFn::kLog},
      {"Sqrt", UnaryKind::kSqrt, MathFn::kSqrt},
      {"Neg", UnaryKind::kNeg, MathFn::kNeg},
      {"Abs", UnaryKind::kAbs, MathFn::kAbs},
      {"Reciprocal", UnaryKind::kReciprocal, MathFn::kReciprocal},
      {"Erf", UnaryKind::kErf, MathFn::kErf},
      {"Softplus", UnaryKind::kSoftplus, MathFn::kSoftplus},
  };
  for (const UnaryEntry& entry : unaries) {
    UnaryKind kind = entry.kind;
    MathFn fn = entry.fn;
    table.add(CpuKernel{
        kOnnxDomain, entry.op,
        [kind, fn](KernelContext& ctx) { return run_unary(ctx, kind, fn); },
        nullptr});
  }
  table.add(CpuKernel{kOnnxDomain, "Gelu", run_gelu, nullptr});
  // No Highway loop: every dtype through the scalar forms.
  const ExactUnaryEntry scalar_unaries[] = {
      {"Sign", MathFn::kSign},   {"Sin", MathFn::kSin},   {"Cos", MathFn::kCos},
      {"Floor", MathFn::kFloor}, {"Ceil", MathFn::kCeil},
  };
  for (const ExactUnaryEntry& entry : scalar_unaries) {
    MathFn fn = entry.fn;
    table.add(
        CpuKernel{kOnnxDomain, entry.op,
                  [fn](KernelContext& ctx) { return run_exact_unary(ctx, fn); },
                  nullptr});
  }
}

}  // namespace seqrt::cpu
