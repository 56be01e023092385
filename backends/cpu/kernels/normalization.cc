// CPU kernels of LayerNormalization and RMSNormalization: X seen as rows of
// the axes [axis, rank); each row's statistics (two passes for the
// variance, so no cancellation) and the scale/shift are vectorised, rows
// run in parallel. Scale and bias are expanded once to a row (or to X's
// shape when they vary across rows).
#include <cmath>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/simd/vec.h"
#include "ops/nn/normalization.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

// A scale or bias broadcast to X, as f32: `row_stride` is 0 when every row
// reads the same `cols` values, else `cols` (one row of values per row).
struct RowParam {
  std::vector<float> values;
  int64_t row_stride = 0;
  const float* row(int64_t r) const { return values.data() + r * row_stride; }
};

Result<RowParam> expand_param(const KernelContext& ctx, const std::string& what,
                              const Tensor& param, const Tensor& x,
                              int64_t axis, const NormalizedRows& split) {
  SEQRT_RETURN_IF_ERROR(
      check_broadcast_to(ctx, what, param.shape(), x.shape()));
  RowParam out;
  // Dims of param aligned to X's rank; leading ones before `axis` mean the
  // same values for every row.
  size_t offset = x.rank() - param.rank();
  for (size_t d = 0; d < param.rank(); ++d) {
    if (static_cast<int64_t>(d + offset) < axis && param.dim(d) != 1) {
      out.row_stride = split.cols;
    }
  }
  int64_t count = out.row_stride == 0 ? split.cols : split.rows * split.cols;
  BroadcastIndexer index(x.dims(), {param.dims()});
  SEQRT_ASSIGN_OR_RETURN(Tensor values, load_f32(param));
  const float* pv = values.data_as<float>();
  out.values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.values[i] = pv[index.input_index(0, i)];
  return out;
}

Status check_floats(const KernelContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t != nullptr && !is_f32_family(t->dtype())) {
      return ctx.unsupported_error(
          "{} input: the CPU backend computes f32/f16/bf16 only",
          dtype_name(t->dtype()));
    }
  }
  return Status::ok();
}

Status run_layer_norm(KernelContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_floats(ctx));
  const Tensor& x_in = *ctx.input(0);
  const Tensor* bias_in = ctx.input(2);
  if (ctx.input(1)->dtype() != x_in.dtype() ||
      (bias_in && bias_in->dtype() != x_in.dtype())) {
    return ctx.error("X, Scale and B must share one dtype");
  }
  SEQRT_ASSIGN_OR_RETURN(DType stash, stash_dtype(ctx));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x_in.rank())));
  NormalizedRows split = split_rows(x_in.dims(), axis);
  SEQRT_ASSIGN_OR_RETURN(
      RowParam scale,
      expand_param(ctx, "input 'Scale'", *ctx.input(1), x_in, axis, split));
  RowParam bias;
  if (bias_in) {
    SEQRT_ASSIGN_OR_RETURN(
        bias, expand_param(ctx, "input 'B'", *bias_in, x_in, axis, split));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(DType::kF32, x.dims()));
  std::vector<int64_t> stats_dims = x.dims();
  for (size_t d = static_cast<size_t>(axis); d < stats_dims.size(); ++d) {
    stats_dims[d] = 1;
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor mean,
                         Tensor::allocate(DType::kF32, stats_dims));
  SEQRT_ASSIGN_OR_RETURN(Tensor inv, Tensor::allocate(DType::kF32, stats_dims));
  const float* px = x.data_as<float>();
  float* py = y.mutable_data_as<float>();
  float* pm = mean.mutable_data_as<float>();
  float* pi = inv.mutable_data_as<float>();
  const float epsilon = ctx.attr_float("epsilon");
  const size_t cols = static_cast<size_t>(split.cols);
  int64_t grain =
      std::max<int64_t>(1, kGrain / std::max<int64_t>(split.cols, 1));
  parallel_chunks(split.rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row = px + r * split.cols;
      float m = sum_f32(row, cols) / static_cast<float>(cols);
      float var =
          sum_squared_deviation_f32(row, m, cols) / static_cast<float>(cols);
      float inv_std = 1.0f / std::sqrt(var + epsilon);
      normalize_row_f32(row, m, inv_std, scale.row(r),
                        bias_in ? bias.row(r) : nullptr, py + r * split.cols,
                        cols);
      pm[r] = m;
      pi[r] = inv_std;
    }
  });
  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 0, y, x_in.dtype()));
  if (ctx.num_outputs() > 1)
    SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 1, mean, stash));
  if (ctx.num_outputs() > 2)
    SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 2, inv, stash));
  return Status::ok();
}

Status run_rms_norm(KernelContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_floats(ctx));
  const Tensor& x_in = *ctx.input(0);
  const Tensor& scale_in = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(stash_dtype(ctx).status());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x_in.rank())));
  NormalizedRows split = split_rows(x_in.dims(), axis);
  SEQRT_ASSIGN_OR_RETURN(
      RowParam scale,
      expand_param(ctx, "input 'scale'", scale_in, x_in, axis, split));
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(DType::kF32, x.dims()));
  const float* px = x.data_as<float>();
  float* py = y.mutable_data_as<float>();
  const float epsilon = ctx.attr_float("epsilon");
  const size_t cols = static_cast<size_t>(split.cols);
  int64_t grain =
      std::max<int64_t>(1, kGrain / std::max<int64_t>(split.cols, 1));
  parallel_chunks(split.rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row = px + r * split.cols;
      float mean_square = dot(row, row, cols) / static_cast<float>(cols);
      float inv_rms = 1.0f / std::sqrt(mean_square + epsilon);
      normalize_row_f32(row, 0.0f, inv_rms, scale.row(r), nullptr,
                        py + r * split.cols, cols);
    }
  });
  // Y has scale's dtype (opset 23).
  return set_output_as(ctx, 0, y, scale_in.dtype());
}

Status supports_norm(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_normalization_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "LayerNormalization", run_layer_norm,
                      supports_norm});
  table.add(
      CpuKernel{kOnnxDomain, "RMSNormalization", run_rms_norm, supports_norm});
}

}  // namespace seqrt::cpu
