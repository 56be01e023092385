// CPU kernels of ArgMax and ArgMin for every dtype they accept, split over
// the threads by axis_walk.h. f32/f16/bf16 compare in f32 (exact), f64 in
// double, integers in their own type; NaN wins as numpy's rule says.
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/axis_walk.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

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
    parallel_chunks(s.outer, std::max<int64_t>(1, kAxisGrain / s.n),
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

}  // namespace

void register_arg_reduce_kernels(KernelTable& table) {
  table.add(CpuKernel{
      kOnnxDomain, "ArgMax",
      [](KernelContext& ctx) { return run_arg_reduce(ctx, true); }, nullptr});
  table.add(CpuKernel{
      kOnnxDomain, "ArgMin",
      [](KernelContext& ctx) { return run_arg_reduce(ctx, false); }, nullptr});
}

}  // namespace seqrt::cpu
