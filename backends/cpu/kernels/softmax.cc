// CPU kernels of Softmax and LogSoftmax along any axis: each line is
// shifted by its max, exponentiated and summed in one vectorised pass. Lines
// along the last axis are contiguous; other axes are gathered into a
// per-thread buffer first. Parallel over lines. f64 computes in double
// with scalar loops, as the reference. f32 goes to oneDNN's softmax
// primitive where the measurement chose it (../onednn/selection.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/onednn/selection.h"
#include "backends/cpu/onednn/softmax.h"
#include "backends/cpu/simd/vec.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

// Softmax of the contiguous `x` into `y`; `scratch` holds n floats, the
// exponentials that log-softmax only sums.
void softmax_line(const float* x, float* y, float* scratch, size_t n,
                  bool log) {
  float max = max_value(x, n);
  float* e = log ? scratch : y;
  std::copy(x, x + n, e);
  float sum = exp_shifted_sum(e, n, max);
  if (log) {
    // (x − max) first: it is exact for the elements near the max, which a
    // single shift by max + log(sum) would round at max's magnitude.
    add_scalar_f32(x, -max, y, n);
    add_scalar_f32(y, -std::log(sum), y, n);
  } else {
    scale(1.0f / sum, y, n);
  }
}

// Softmax in double of the line x[0], x[stride], ... into y likewise.
void softmax_line_f64(const double* x, double* y, int64_t n, int64_t stride,
                      bool log) {
  double max = -INFINITY;
  for (int64_t k = 0; k < n; ++k) max = std::fmax(max, x[k * stride]);
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += std::exp(x[k * stride] - max);
  for (int64_t k = 0; k < n; ++k) {
    double shifted = x[k * stride] - max;
    y[k * stride] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
  }
}

Status run_softmax_f64(KernelContext& ctx, int64_t axis, bool log) {
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t length = rank == 0 ? 1 : x.dim(axis);
  const int64_t inner = rank == 0 ? 1 : strides_of(x.dims())[axis];
  const int64_t lines = length == 0 ? 0 : x.num_elements() / length;
  const double* px = x.data_as<double>();
  double* py = y->mutable_data_as<double>();
  parallel_chunks(
      lines, std::max<int64_t>(1, kGrain / std::max<int64_t>(length, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          int64_t base = (line / inner) * length * inner + line % inner;
          softmax_line_f64(px + base, py + base, length, inner, log);
        }
      });
  return Status::ok();
}

Status run_softmax(KernelContext& ctx, bool log) {
  const Tensor& x_in = *ctx.input(0);
  if (x_in.dtype() == DType::kF64) {
    const int64_t rank = static_cast<int64_t>(x_in.rank());
    SEQRT_ASSIGN_OR_RETURN(
        int64_t axis,
        normalize_axis(ctx, ctx.attr_int("axis"), rank == 0 ? 1 : rank));
    return run_softmax_f64(ctx, axis, log);
  }
  if (!is_f32_family(x_in.dtype())) {
    return ctx.unsupported_error(
        "{} input: the CPU backend computes f32/f16/bf16 only",
        dtype_name(x_in.dtype()));
  }
  int64_t rank = static_cast<int64_t>(x_in.rank());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis"),
                                                      rank == 0 ? 1 : rank));
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x_in.dtype(), x.dims()));
  const float* px = x.data_as<float>();
  float* py = y.mutable_data_as<float>();
  if (x_in.dtype() == DType::kF32 && x.num_elements() > 0 &&
      onednn::use_onednn(onednn::OpClass::kSoftmax, x.num_elements())) {
    SEQRT_ASSIGN_OR_RETURN(bool ran,
                           onednn::softmax(ctx.node().label(), x.dims(),
                                           rank == 0 ? 0 : axis, log, px, py));
    if (ran) return set_output_as(ctx, 0, y, x_in.dtype());
  }
  int64_t length = rank == 0 ? 1 : x.dim(axis);
  int64_t inner = rank == 0 ? 1 : strides_of(x.dims())[axis];
  int64_t lines = length == 0 ? 0 : x.num_elements() / length;
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(length, 1));
  size_t n = static_cast<size_t>(length);
  parallel_chunks(lines, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(n);
    std::vector<float> line_in(inner == 1 ? 0 : n);
    std::vector<float> line_out(inner == 1 ? 0 : n);
    for (int64_t line = begin; line < end; ++line) {
      int64_t base = (line / inner) * length * inner + line % inner;
      if (inner == 1) {
        softmax_line(px + base, py + base, scratch.data(), n, log);
        continue;
      }
      for (size_t k = 0; k < n; ++k) line_in[k] = px[base + k * inner];
      softmax_line(line_in.data(), line_out.data(), scratch.data(), n, log);
      for (size_t k = 0; k < n; ++k) py[base + k * inner] = line_out[k];
    }
  });
  return set_output_as(ctx, 0, y, x_in.dtype());
}

}  // namespace

void register_softmax_kernels(KernelTable& table) {
  table.add(CpuKernel{
      kOnnxDomain, "Softmax",
      [](KernelContext& ctx) { return run_softmax(ctx, false); }, nullptr});
  table.add(CpuKernel{kOnnxDomain, "LogSoftmax",
                      [](KernelContext& ctx) { return run_softmax(ctx, true); },
                      nullptr});
}

}  // namespace seqrt::cpu
