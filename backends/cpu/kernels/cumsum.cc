// CPU kernel of CumSum for every dtype it accepts, split over the threads by
// axis_walk.h: floats sum in double, integers exactly in their own type
// (sums wrap).
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/axis_walk.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// y along the axis: the running sum in A, stored as T.
template <typename T, typename A>
void cumsum(const AxisSplit& s, const T* x, bool exclusive, bool reverse,
            T* y) {
  if (s.inner == 1) {  // contiguous lines: one running sum per line
    parallel_chunks(
        s.outer, std::max<int64_t>(1, kAxisGrain / std::max<int64_t>(s.n, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const T* line = x + o * s.n;
            T* dst = y + o * s.n;
            A sum = A(0);
            for (int64_t step = 0; step < s.n; ++step) {
              int64_t k = reverse ? s.n - 1 - step : step;
              A before = sum;
              if constexpr (std::is_integral_v<A>) {
                sum = wrap_add(sum, static_cast<A>(line[k]));
              } else {
                sum = sum + static_cast<A>(line[k]);
              }
              dst[k] = static_cast<T>(exclusive ? before : sum);
            }
          }
        });
    return;
  }
  for_each_column_chunk(s, [&](int64_t o, int64_t c0, int64_t n) {
    std::vector<A> sum(static_cast<size_t>(n), A(0));
    for (int64_t step = 0; step < s.n; ++step) {
      int64_t k = reverse ? s.n - 1 - step : step;
      int64_t offset = (o * s.n + k) * s.inner + c0;
      const T* row = x + offset;
      T* dst = y + offset;
      for (int64_t j = 0; j < n; ++j) {
        A value = static_cast<A>(row[j]);
        A before = sum[j];
        if constexpr (std::is_integral_v<A>) {
          sum[j] = wrap_add(sum[j], value);
        } else {
          sum[j] = sum[j] + value;
        }
        dst[j] = static_cast<T>(exclusive ? before : sum[j]);
      }
    }
  });
}

Status run_cumsum(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& axis_tensor = *ctx.input(1);
  if (!is_integer(axis_tensor.dtype()) || axis_tensor.num_elements() != 1) {
    return ctx.error("input 'axis' must be one integer");
  }
  if (x.rank() == 0) {
    return ctx.error("input 'x' must have rank >= 1, got a scalar");
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, axis_tensor.element_i64(0),
                                        static_cast<int64_t>(x.rank())));
  const AxisSplit s = split_around_axis(x.dims(), axis);
  const bool exclusive = ctx.attr_int("exclusive") != 0;
  const bool reverse = ctx.attr_int("reverse") != 0;
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor in, load_f32(x));
    SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, x.dtype(), x.dims()));
    cumsum<float, double>(s, in.data_as<float>(), exclusive, reverse,
                          out.mutable_data_as<float>());
    return set_output_as(ctx, 0, out, x.dtype());
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  bool handled = visit_exact_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    cumsum<T, T>(s, x.data_as<T>(), exclusive, reverse,
                 y->template mutable_data_as<T>());
  });
  if (!handled) {
    return ctx.unsupported_error("{} input", dtype_name(x.dtype()));
  }
  return Status::ok();
}

}  // namespace

void register_cumsum_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "CumSum", run_cumsum, nullptr});
}

}  // namespace seqrt::cpu
