// CPU kernels of LayerNormalization and RMSNormalization: X seen as rows of
// the axes [axis, rank); each row's statistics (two passes for the
// variance, so no cancellation) and the scale/shift are vectorised, rows
// run in parallel. Scale and bias are expanded once to a row (or to X's
// shape when they vary across rows). f64 inputs compute in double with
// scalar loops, as the reference. An f32 LayerNormalization with one
// scale (and shift) row and no statistics outputs goes to oneDNN's
// layer_normalization primitive where the measurement chose it
// (../onednn/selection.h); RMSNormalization has no oneDNN 2.6 form.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/onednn/layer_norm.h"
#include "backends/cpu/onednn/selection.h"
#include "backends/cpu/simd/vec.h"
#include "ops/nn/normalization.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

// A scale or bias broadcast to X, as T (f32, or f64 for f64 inputs):
// `row_stride` is 0 when every row reads the same `cols` values, else `cols`
// (one row of values per row).
template <typename T = float>
struct RowParam {
  std::vector<T> values;
  int64_t row_stride = 0;
  const T* row(int64_t r) const { return values.data() + r * row_stride; }
};

template <typename T = float>
Result<RowParam<T>> expand_param(const KernelContext& ctx,
                                 const std::string& what, const Tensor& param,
                                 const Tensor& x, int64_t axis,
                                 const NormalizedRows& split) {
  SEQRT_RETURN_IF_ERROR(
      check_broadcast_to(ctx, what, param.shape(), x.shape()));
  RowParam<T> out;
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
  Tensor values = param;
  if constexpr (std::is_same_v<T, float>) {
    SEQRT_ASSIGN_OR_RETURN(values, load_f32(param));
  }
  const T* pv = values.data_as<T>();
  out.values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.values[i] = pv[index.input_index(0, i)];
  return out;
}

// LayerNormalization of f64 X (Scale and B f64 too) in double.
Status run_layer_norm_f64(KernelContext& ctx, DType stash) {
  const Tensor& x = *ctx.input(0);
  const Tensor* bias_in = ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  NormalizedRows split = split_rows(x.dims(), axis);
  SEQRT_ASSIGN_OR_RETURN(RowParam<double> scale,
                         expand_param<double>(ctx, "input 'Scale'",
                                              *ctx.input(1), x, axis, split));
  RowParam<double> bias;
  if (bias_in) {
    SEQRT_ASSIGN_OR_RETURN(
        bias, expand_param<double>(ctx, "input 'B'", *bias_in, x, axis, split));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  std::vector<int64_t> stats_dims = x.dims();
  for (size_t d = static_cast<size_t>(axis); d < stats_dims.size(); ++d) {
    stats_dims[d] = 1;
  }
  Tensor* stats[2] = {nullptr, nullptr};
  for (size_t i = 1; i < 3 && i < ctx.num_outputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(stats[i - 1],
                           ctx.allocate_output(i, stash, stats_dims));
  }
  const double* px = x.data_as<double>();
  double* py = y->mutable_data_as<double>();
  const double epsilon = ctx.attr_float("epsilon");
  const int64_t cols = split.cols;
  parallel_chunks(
      split.rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(cols, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const double* row = px + r * cols;
          double mean = 0.0;
          for (int64_t c = 0; c < cols; ++c) mean += row[c];
          mean /= static_cast<double>(cols);
          double variance = 0.0;
          for (int64_t c = 0; c < cols; ++c) {
            variance += (row[c] - mean) * (row[c] - mean);
          }
          variance /= static_cast<double>(cols);
          const double inv_std = 1.0 / std::sqrt(variance + epsilon);
          const double* sc = scale.row(r);
          const double* bi = bias_in ? bias.row(r) : nullptr;
          double* out = py + r * cols;
          for (int64_t c = 0; c < cols; ++c) {
            out[c] = (row[c] - mean) * inv_std * sc[c] + (bi ? bi[c] : 0.0);
          }
          if (stats[0] != nullptr) stats[0]->set_element_f64(r, mean);
          if (stats[1] != nullptr) stats[1]->set_element_f64(r, inv_std);
        }
      });
  return Status::ok();
}

// RMSNormalization of f64 X (and scale) in double.
Status run_rms_norm_f64(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  NormalizedRows split = split_rows(x.dims(), axis);
  SEQRT_ASSIGN_OR_RETURN(RowParam<double> scale,
                         expand_param<double>(ctx, "input 'scale'",
                                              *ctx.input(1), x, axis, split));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  const double* px = x.data_as<double>();
  double* py = y->mutable_data_as<double>();
  const double epsilon = ctx.attr_float("epsilon");
  const int64_t cols = split.cols;
  parallel_chunks(
      split.rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(cols, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const double* row = px + r * cols;
          double mean_square = 0.0;
          for (int64_t c = 0; c < cols; ++c) mean_square += row[c] * row[c];
          mean_square /= static_cast<double>(cols);
          const double inv_rms = 1.0 / std::sqrt(mean_square + epsilon);
          const double* sc = scale.row(r);
          for (int64_t c = 0; c < cols; ++c) {
            py[r * cols + c] = row[c] * inv_rms * sc[c];
          }
        }
      });
  return Status::ok();
}

// Whether every input is f64 (the double path); mixes with f64 go to the
// f32 path, which declines them.
bool all_f64(const KernelContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t != nullptr && t->dtype() != DType::kF64) return false;
  }
  return true;
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
  if (all_f64(ctx)) {
    SEQRT_ASSIGN_OR_RETURN(DType stash, stash_dtype(ctx));
    return run_layer_norm_f64(ctx, stash);
  }
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
      RowParam<> scale,
      expand_param(ctx, "input 'Scale'", *ctx.input(1), x_in, axis, split));
  RowParam<> bias;
  if (bias_in) {
    SEQRT_ASSIGN_OR_RETURN(
        bias, expand_param(ctx, "input 'B'", *bias_in, x_in, axis, split));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x_in.dtype(), x.dims()));
  if (x_in.dtype() == DType::kF32 && ctx.num_outputs() == 1 &&
      scale.row_stride == 0 && (!bias_in || bias.row_stride == 0) &&
      onednn::use_onednn(onednn::OpClass::kLayerNorm, x.num_elements())) {
    SEQRT_ASSIGN_OR_RETURN(
        bool ran,
        onednn::layer_norm(ctx.node().label(), split.rows, split.cols,
                           ctx.attr_float("epsilon"), x.data_as<float>(),
                           scale.row(0), bias_in ? bias.row(0) : nullptr,
                           y.mutable_data_as<float>()));
    if (ran) return set_output_as(ctx, 0, y, x_in.dtype());
  }
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
  if (all_f64(ctx)) {
    SEQRT_RETURN_IF_ERROR(stash_dtype(ctx).status());
    return run_rms_norm_f64(ctx);
  }
  SEQRT_RETURN_IF_ERROR(check_floats(ctx));
  const Tensor& x_in = *ctx.input(0);
  const Tensor& scale_in = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(stash_dtype(ctx).status());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x_in.rank())));
  NormalizedRows split = split_rows(x_in.dims(), axis);
  SEQRT_ASSIGN_OR_RETURN(
      RowParam<> scale,
      expand_param(ctx, "input 'scale'", scale_in, x_in, axis, split));
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, 0, scale_in.dtype(), x.dims()));
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

}  // namespace

void register_normalization_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "LayerNormalization", run_layer_norm, nullptr});
  table.add(CpuKernel{kOnnxDomain, "RMSNormalization", run_rms_norm, nullptr});
}

}  // namespace seqrt::cpu
