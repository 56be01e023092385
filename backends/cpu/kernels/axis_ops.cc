// CPU kernels of the ops that walk one axis: ArgMax, ArgMin and CumSum, for
// every dtype they accept. The input is viewed as [outer, n, inner] around
// the axis; each task takes one outer slice and a chunk of inner columns and
// walks the axis row by row, so the inner loops are contiguous and
// vectorise. f32/f16/bf16 compare in f32 (exact) and sum in double, f64 in
// double, integers exactly in their own type (sums wrap).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;
constexpr int64_t kColumnChunk = 1024;

// Calls fn(outer index, first column, column count) for every task.
template <typename Fn>
void for_each_column_chunk(const AxisSplit& s, Fn&& fn) {
  // Enough chunks that a single outer slice still splits over the threads.
  const int64_t split = (s.inner + 4 * max_threads() - 1) / (4 * max_threads());
  const int64_t chunk = std::max<int64_t>(
      1, std::min(s.inner, std::clamp<int64_t>(split, 64, kColumnChunk)));
  const int64_t chunks = (s.inner + chunk - 1) / chunk;
  const int64_t per_task = std::max<int64_t>(1, chunk * s.n);
  const int64_t grain = std::max<int64_t>(1, kGrain / per_task);
  parallel_chunks(s.outer * chunks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t c0 = (task % chunks) * chunk;
      fn(task / chunks, c0, std::min(chunk, s.inner - c0));
    }
  });
}

// --- ArgMax / ArgMin ---------------------------------------------------------

// Whether `x`, met after `best`, takes its place; NaN counts as beyond
// every number (numpy's rule, as the reference).
template <bool kMax, typename T>
bool replaces(T x, T best, bool last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return last && std::isnan(x);
    if (std::isnan(x)) return true;
  }
  if (x == best) return last;
  return kMax ? x > best : x < best;
}

template <bool kMax, typename T>
void arg_reduce(const AxisSplit& s, const T* x, bool last, int64_t* out) {
  if (s.inner == 1) {  // contiguous lines: one running best per line
    parallel_chunks(s.outer, std::max<int64_t>(1, kGrain / s.n),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t o = begin; o < end; ++o) {
                        const T* line = x + o * s.n;
                        T best = line[0];
                        int64_t index = 0;
                        for (int64_t k = 1; k < s.n; ++k) {
                          if (replaces<kMax>(line[k], best, last)) {
                            best = line[k];
                            index = k;
                          }
                        }
                        out[o] = index;
                      }
                    });
    return;
  }
  for_each_column_chunk(s, [&](int64_t o, int64_t c0, int64_t n) {
    std::vector<T> best(x + o * s.n * s.inner + c0,
                        x + o * s.n * s.inner + c0 + n);
    int64_t* index = out + o * s.inner + c0;
    for (int64_t j = 0; j < n; ++j) index[j] = 0;
    for (int64_t k = 1; k < s.n; ++k) {
      const T* row = x + (o * s.n + k) * s.inner + c0;
      for (int64_t j = 0; j < n; ++j) {
        if (replaces<kMax>(row[j], best[j], last)) {
          best[j] = row[j];
          index[j] = k;
        }
      }
    }
  });
}

Status run_arg_reduce(KernelContext& ctx, bool is_max) {
  const Tensor& x = *ctx.input(0);
  const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(x.rank()));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"), rank));
  std::vector<int64_t> dims = x.dims();
  if (dims.empty()) dims = {1};
  if (dims[axis] == 0) {
    return ctx.error("axis {} has size 0, so there is no element to pick",
                     axis);
  }
  const AxisSplit s = split_around_axis(dims, axis);
  std::vector<int64_t> out_dims = x.dims();
  if (!out_dims.empty()) {
    if (ctx.attr_int("keepdims") != 0) {
      out_dims[axis] = 1;
    } else {
      out_dims.erase(out_dims.begin() + axis);
    }
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kI64, out_dims));
  int64_t* po = out->mutable_data_as<int64_t>();
  const bool last = ctx.attr_int("select_last_index") != 0;
  auto run = [&](auto tag, const void* data) {
    using T = decltype(tag);
    const T* px = static_cast<const T*>(data);
    if (is_max) {
      arg_reduce<true, T>(s, px, last, po);
    } else {
      arg_reduce<false, T>(s, px, last, po);
    }
  };
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor in, load_f32(x));
    run(float{}, in.data());
    return Status::ok();
  }
  if (!visit_exact_numeric(x.dtype(), [&](auto tag) { run(tag, x.data()); })) {
    return ctx.unsupported_error("{} input", dtype_name(x.dtype()));
  }
  return Status::ok();
}

// --- CumSum ------------------------------------------------------------------

// y along the axis: the running sum in A, stored as T.
template <typename T, typename A>
void cumsum(const AxisSplit& s, const T* x, bool exclusive, bool reverse,
            T* y) {
  if (s.inner == 1) {  // contiguous lines: one running sum per line
    parallel_chunks(s.outer,
                    std::max<int64_t>(1, kGrain / std::max<int64_t>(s.n, 1)),
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

void register_axis_op_kernels(KernelTable& table) {
  table.add(CpuKernel{
      kOnnxDomain, "ArgMax",
      [](KernelContext& ctx) { return run_arg_reduce(ctx, true); }, nullptr});
  table.add(CpuKernel{
      kOnnxDomain, "ArgMin",
      [](KernelContext& ctx) { return run_arg_reduce(ctx, false); }, nullptr});
  table.add(CpuKernel{kOnnxDomain, "CumSum", run_cumsum, nullptr});
}

}  // namespace seqrt::cpu
