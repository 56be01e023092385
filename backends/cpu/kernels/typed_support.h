// Pieces shared by the CPU kernels that compute in every seqrt dtype (f64
// and the integers exactly, not through f32): a dtype → C++ type dispatch,
// the reference's conversion of a double into a dtype, and numpy
// broadcasting of N inputs as runs over the innermost coalesced axis.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/float_support.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt::cpu {

// Calls fn(T{}) with T the storage type of `dtype` for f64 and the
// integers; returns false for the others (the f32 family, which the f32
// kernels handle, and bool).
template <typename Fn>
bool visit_exact_numeric(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF64:
      fn(double{});
      return true;
    case DType::kI8:
      fn(int8_t{});
      return true;
    case DType::kU8:
      fn(uint8_t{});
      return true;
    case DType::kI32:
      fn(int32_t{});
      return true;
    case DType::kI64:
      fn(int64_t{});
      return true;
    default:
      return false;
  }
}

// The same with bool too.
template <typename Fn>
bool visit_exact_dtype(DType dtype, Fn&& fn) {
  if (dtype == DType::kBool) {
    fn(bool{});
    return true;
  }
  return visit_exact_numeric(dtype, std::forward<Fn>(fn));
}

// `value` stored as T the way Tensor::set_element_f64 stores it: integers
// truncate toward zero, saturate to the range, NaN gives 0; bool is != 0.
template <typename T>
T from_f64(double value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value != 0.0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(value);
  } else {
    if (std::isnan(value)) return 0;
    if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(value);
  }
}

// Two's-complement arithmetic in T without signed overflow (the reference
// computes in int64 and wraps into the dtype, which gives the same bits).
template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint8/16 promote to int: multiply in uint32 so it cannot overflow.
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) *
                                       static_cast<W>(static_cast<U>(b))));
}

// The output dims of a broadcast of several inputs, with per input strides
// (0 on broadcast axes) after merging neighbouring axes that every input
// reads as one. The last axis is the run; its strides are 0 or 1.
struct BroadcastRuns {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> dims;                  // coalesced; never empty
  std::vector<std::vector<int64_t>> strides;  // [input][coalesced axis]
  int64_t num_elements = 1;

  int64_t run_length() const { return dims.back(); }
  int64_t num_runs() const {
    return dims.back() == 0 ? 0 : num_elements / dims.back();
  }
  int64_t step(size_t input) const { return strides[input].back(); }
};

Result<BroadcastRuns> plan_broadcast_runs(
    const OpContext& ctx, const std::vector<std::vector<int64_t>>& inputs);

// Calls run(offsets, out_offset) for every run, in parallel chunks;
// `offsets` holds the first element of the run in each input.
template <typename Run>
void for_each_broadcast_run(const BroadcastRuns& plan, Run&& run) {
  const int64_t length = plan.run_length();
  const int64_t grain =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(length, 1));
  const size_t outer = plan.dims.size() - 1;
  const size_t inputs = plan.strides.size();
  parallel_chunks(plan.num_runs(), grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(inputs);
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r;
      for (size_t k = 0; k < inputs; ++k) offsets[k] = 0;
      for (size_t i = outer; i-- > 0;) {
        int64_t index = rest % plan.dims[i];
        rest /= plan.dims[i];
        for (size_t k = 0; k < inputs; ++k) {
          offsets[k] += index * plan.strides[k][i];
        }
      }
      run(offsets.data(), r * length);
    }
  });
}

// out[i] = f(a[i·sa], b[i·sb]) for steps 0 or 1, with the step known at
// compile time in each branch so the compiler vectorises the loop.
template <typename A, typename B, typename O, typename F>
void binary_run(const A* a, int64_t sa, const B* b, int64_t sb, O* out,
                int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    const B y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else if (sb == 1) {
    const A x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else {
    const O value = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = value;
  }
}

// out[i] = f(a, b) into a bool tensor with numpy broadcasting, both inputs
// read as T (the comparisons and the logical ops).
template <typename T, typename F>
Status compare_with(KernelContext& ctx, const Tensor& a, const Tensor& b, F f) {
  SEQRT_ASSIGN_OR_RETURN(BroadcastRuns plan,
                         plan_broadcast_runs(ctx, {a.dims(), b.dims()}));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kBool, plan.out_dims));
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  bool* po = out->mutable_data_as<bool>();
  const int64_t length = plan.run_length();
  for_each_broadcast_run(plan, [&](const int64_t* offsets, int64_t o) {
    binary_run(pa + offsets[0], plan.step(0), pb + offsets[1], plan.step(1),
               po + o, length, f);
  });
  return Status::ok();
}

// Inputs 'A' and 'B' are both present and of one dtype (the comparisons
// and the logical ops).
Status check_two_same(const KernelContext& ctx);

}  // namespace seqrt::cpu
