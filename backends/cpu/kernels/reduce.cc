// CPU kernels of ReduceSum, ReduceMean, ReduceMax and ReduceMin for every
// dtype. The input's dims are merged into alternating groups of kept and
// reduced axes; the innermost group is then either reduced (each output
// folds contiguous runs: a vector sum for f32) or kept (each output row
// folds whole rows elementwise, which vectorises). Outputs, row chunks, or
// (for few output rows) ranges of the reduced rows spread over the threads.
// f32/f16/bf16 accumulate in f32, f64 in double, integers in int64 (sums
// wrap as the reference's). f32 goes to oneDNN's reduction primitive where
// the measurement chose it (../onednn/selection.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/typed_support.h"
#include "backends/cpu/onednn/reduction.h"
#include "backends/cpu/onednn/selection.h"
#include "ops/reduce/reduce.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Elements per parallel task.
constexpr int64_t kGrain = 16384;

// The input as [kept outer groups] × [reduced groups] × inner group.
struct ReducePlan {
  std::vector<int64_t> kept_dims;        // outer kept groups
  std::vector<int64_t> kept_strides;     // their input strides
  std::vector<int64_t> reduced_offsets;  // one per reduced coordinate
  int64_t inner = 1;
  bool inner_reduced = false;
  int64_t rows = 1;   // product of kept_dims
  int64_t count = 1;  // elements folded into each output
};

struct Group {
  int64_t size;
  int64_t stride;
  bool reduced;
};

std::vector<Group> merge_groups(const std::vector<int64_t>& dims,
                                const std::vector<bool>& reduced) {
  std::vector<int64_t> strides = strides_of(dims);
  std::vector<Group> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduced[d]) {
      groups.back().size *= dims[d];
      groups.back().stride = strides[d];
      continue;
    }
    groups.push_back(Group{dims[d], strides[d], reduced[d]});
  }
  return groups;
}

ReducePlan plan_reduce(const std::vector<int64_t>& dims,
                       const std::vector<bool>& reduced) {
  std::vector<Group> groups = merge_groups(dims, reduced);
  ReducePlan plan;
  if (!groups.empty()) {
    plan.inner = groups.back().size;
    plan.inner_reduced = groups.back().reduced;
    groups.pop_back();
  }
  plan.count = plan.inner_reduced ? plan.inner : 1;
  plan.reduced_offsets = {0};
  for (const Group& g : groups) {
    if (!g.reduced) {
      plan.kept_dims.push_back(g.size);
      plan.kept_strides.push_back(g.stride);
      plan.rows *= g.size;
      continue;
    }
    plan.count *= g.size;
    std::vector<int64_t> next;
    next.reserve(plan.reduced_offsets.size() * g.size);
    for (int64_t base : plan.reduced_offsets) {
      for (int64_t i = 0; i < g.size; ++i) next.push_back(base + i * g.stride);
    }
    plan.reduced_offsets = std::move(next);
  }
  return plan;
}

int64_t kept_offset(const ReducePlan& plan, int64_t row) {
  int64_t offset = 0;
  for (size_t i = plan.kept_dims.size(); i-- > 0;) {
    offset += (row % plan.kept_dims[i]) * plan.kept_strides[i];
    row /= plan.kept_dims[i];
  }
  return offset;
}

// The fold of one kind in accumulator type A: the identity, one step, and
// the final value from the accumulator and the count.
template <ReduceKind K, typename A>
struct Fold {
  static A identity() {
    if constexpr (K == ReduceKind::kMax) {
      if constexpr (std::is_floating_point_v<A>) return -INFINITY;
      return std::numeric_limits<A>::lowest();
    } else if constexpr (K == ReduceKind::kMin) {
      if constexpr (std::is_floating_point_v<A>) return INFINITY;
      return std::numeric_limits<A>::max();
    } else {
      return A(0);
    }
  }
  // NaN propagates through max and min, as the reference's.
  static A step(A acc, A x) {
    if constexpr (K == ReduceKind::kMax) {
      if constexpr (std::is_floating_point_v<A>) {
        return x > acc || std::isnan(x) ? x : acc;
      }
      return x > acc ? x : acc;
    } else if constexpr (K == ReduceKind::kMin) {
      if constexpr (std::is_floating_point_v<A>) {
        return x < acc || std::isnan(x) ? x : acc;
      }
      return x < acc ? x : acc;
    } else if constexpr (std::is_integral_v<A>) {
      return wrap_add(acc, x);
    } else {
      return acc + x;
    }
  }
  // Integer means truncate toward zero.
  static A finish(A acc, int64_t count) {
    if constexpr (K == ReduceKind::kMean) return acc / static_cast<A>(count);
    return acc;
  }
};

// Folds the contiguous run x[0, n) into acc. Sums of f32 use the Highway
// sum; the others fold into kLanes independent accumulators, which the
// compiler vectorises, then fold those.
template <ReduceKind K, typename T, typename A>
A fold_run(A acc, const T* x, int64_t n) {
  using F = Fold<K, A>;
  constexpr bool kSum = K == ReduceKind::kSum || K == ReduceKind::kMean;
  if constexpr (kSum && std::is_same_v<T, float>) {
    return acc + sum_f32(x, static_cast<size_t>(n));
  }
  constexpr int64_t kLanes = 16;
  int64_t i = 0;
  if (n >= 2 * kLanes) {
    A lanes[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] = F::identity();
    for (; i + kLanes <= n; i += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) {
        lanes[j] = F::step(lanes[j], static_cast<A>(x[i + j]));
      }
    }
    for (int64_t j = 0; j < kLanes; ++j) acc = F::step(acc, lanes[j]);
  }
  for (; i < n; ++i) acc = F::step(acc, static_cast<A>(x[i]));
  return acc;
}

template <ReduceKind K, typename T, typename A>
void reduce_inner_reduced(const ReducePlan& plan, const T* x, T* out) {
  using F = Fold<K, A>;
  int64_t grain =
      std::max<int64_t>(1, kGrain / std::max<int64_t>(plan.count, 1));
  parallel_chunks(plan.rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const T* base = x + kept_offset(plan, row);
      A acc = F::identity();
      for (int64_t r : plan.reduced_offsets) {
        acc = fold_run<K, T, A>(acc, base + r, plan.inner);
      }
      out[row] = static_cast<T>(F::finish(acc, plan.count));
    }
  });
}

template <ReduceKind K, typename T, typename A>
void reduce_inner_kept(const ReducePlan& plan, const T* x, T* out) {
  using F = Fold<K, A>;
  // Tasks are (row, column chunk) so a single row still splits over the
  // threads; chunks stay a multiple of 16 columns for the vector loops.
  const int64_t split = (plan.inner + max_threads() - 1) / max_threads();
  const int64_t chunk = std::min<int64_t>(
      plan.inner, std::clamp<int64_t>((split + 15) / 16 * 16, 64, 4096));
  const int64_t chunks = (plan.inner + chunk - 1) / chunk;
  int64_t per_task = chunk * static_cast<int64_t>(plan.reduced_offsets.size());
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(per_task, 1));
  parallel_chunks(plan.rows * chunks, grain, [&](int64_t begin, int64_t end) {
    std::vector<A> acc(static_cast<size_t>(chunk));
    for (int64_t task = begin; task < end; ++task) {
      int64_t row = task / chunks;
      int64_t c0 = (task % chunks) * chunk;
      int64_t n = std::min(chunk, plan.inner - c0);
      const T* base = x + kept_offset(plan, row) + c0;
      for (int64_t j = 0; j < n; ++j) acc[j] = F::identity();
      for (int64_t r : plan.reduced_offsets) {
        const T* src = base + r;
        for (int64_t j = 0; j < n; ++j) {
          acc[j] = F::step(acc[j], static_cast<A>(src[j]));
        }
      }
      T* dst = out + row * plan.inner + c0;
      for (int64_t j = 0; j < n; ++j) {
        dst[j] = static_cast<T>(F::finish(acc[j], plan.count));
      }
    }
  });
}

// Few output rows folding many input rows (ReduceSum over axis 0 of a
// matrix): each thread folds a contiguous range of the reduced rows into
// its own accumulators, streaming through memory, then the partial results
// fold together.
template <ReduceKind K, typename T, typename A>
void reduce_split_rows(const ReducePlan& plan, const T* x, T* out,
                       int64_t parts) {
  using F = Fold<K, A>;
  const int64_t width = plan.rows * plan.inner;
  const int64_t count = static_cast<int64_t>(plan.reduced_offsets.size());
  std::vector<A> partial(static_cast<size_t>(parts * width), F::identity());
  parallel_for(parts, [&](int64_t part) {
    A* acc = partial.data() + part * width;
    for (int64_t i = part * count / parts; i < (part + 1) * count / parts;
         ++i) {
      for (int64_t row = 0; row < plan.rows; ++row) {
        const T* src = x + kept_offset(plan, row) + plan.reduced_offsets[i];
        A* dst = acc + row * plan.inner;
        for (int64_t j = 0; j < plan.inner; ++j) {
          dst[j] = F::step(dst[j], static_cast<A>(src[j]));
        }
      }
    }
  });
  for (int64_t j = 0; j < width; ++j) {
    A acc = partial[j];
    for (int64_t part = 1; part < parts; ++part) {
      acc = F::step(acc, partial[part * width + j]);
    }
    out[j] = static_cast<T>(F::finish(acc, plan.count));
  }
}

template <ReduceKind K, typename T, typename A>
void reduce_typed(const ReducePlan& plan, const T* x, T* out) {
  const int64_t threads = max_threads();
  const int64_t count = static_cast<int64_t>(plan.reduced_offsets.size());
  if (plan.inner_reduced) {
    reduce_inner_reduced<K, T, A>(plan, x, out);
  } else if (threads > 1 && plan.rows < threads && count >= 4 * threads &&
             plan.rows * plan.inner <= (int64_t{1} << 20)) {
    reduce_split_rows<K, T, A>(plan, x, out, threads);
  } else {
    reduce_inner_kept<K, T, A>(plan, x, out);
  }
}

template <typename T, typename A>
void reduce_dispatch(ReduceKind kind, const ReducePlan& plan, const T* x,
                     T* out) {
  switch (kind) {
    case ReduceKind::kSum:
      return reduce_typed<ReduceKind::kSum, T, A>(plan, x, out);
    case ReduceKind::kMean:
      return reduce_typed<ReduceKind::kMean, T, A>(plan, x, out);
    case ReduceKind::kMax:
      return reduce_typed<ReduceKind::kMax, T, A>(plan, x, out);
    case ReduceKind::kMin:
      return reduce_typed<ReduceKind::kMin, T, A>(plan, x, out);
  }
}

// Which dims the node reduces (ONNX 18: axes input, noop_with_empty_axes).
Result<std::vector<bool>> reduced_dims(const KernelContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (const Tensor* t = ctx.input(1)) {
    if (t->dtype() != DType::kI64 || t->rank() > 1) {
      return ctx.error("input 'axes' must be a 1-D i64 tensor");
    }
    axes = tensor_to_ints(*t);
  }
  if (axes.empty() && ctx.attr_int("noop_with_empty_axes") != 0) {
    return std::vector<bool>(static_cast<size_t>(rank), false);
  }
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  for (int64_t axis : axes) {
    if (rank == 0) return ctx.error("a scalar has no axis {} to reduce", axis);
    SEQRT_ASSIGN_OR_RETURN(int64_t d, normalize_axis(ctx, axis, rank));
    if (reduced[d]) return ctx.error("axis {} is listed twice in axes", axis);
    reduced[d] = true;
  }
  return reduced;
}

Status fill_empty(KernelContext& ctx, ReduceKind kind, Tensor& out) {
  SEQRT_ASSIGN_OR_RETURN(double value,
                         reduce_empty_value(ctx, kind, out.dtype()));
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    out.set_element_f64(i, value);
  }
  return Status::ok();
}

onednn::Reduction onednn_reduction_of(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return onednn::Reduction::kSum;
    case ReduceKind::kMean:
      return onednn::Reduction::kMean;
    case ReduceKind::kMax:
      return onednn::Reduction::kMax;
    case ReduceKind::kMin:
      break;
  }
  return onednn::Reduction::kMin;
}

// An f32 reduction on oneDNN's reduction primitive when the measurement
// chose it. False: the own kernel runs the node.
Result<bool> run_onednn_reduce(KernelContext& ctx, ReduceKind kind,
                               const std::vector<bool>& reduced,
                               const std::vector<int64_t>& out_dims) {
  const Tensor& x = *ctx.input(0);
  if (x.dtype() != DType::kF32 ||
      !onednn::use_onednn(onednn_reduction_of(kind), x.num_elements())) {
    return false;
  }
  std::vector<int64_t> kept = x.dims();
  for (size_t d = 0; d < kept.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, x.dtype(), out_dims));
  return onednn::reduce(ctx.node().label(), onednn_reduction_of(kind), x.dims(),
                        kept, x.data_as<float>(), out.mutable_data_as<float>());
}

Status run_reduce(KernelContext& ctx, ReduceKind kind) {
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                         reduced_dims(ctx, static_cast<int64_t>(x.rank())));
  const bool keepdims = ctx.attr_int("keepdims") != 0;
  std::vector<int64_t> out_dims;
  int64_t out_count = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d]) out_dims.push_back(x.dim(d));
    if (reduced[d] && keepdims) out_dims.push_back(1);
    if (!reduced[d]) out_count *= x.dim(d);
  }
  if (x.num_elements() == 0) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                           ctx.allocate_output(0, x.dtype(), out_dims));
    return out_count == 0 ? Status::ok() : fill_empty(ctx, kind, *out);
  }
  SEQRT_ASSIGN_OR_RETURN(bool ran,
                         run_onednn_reduce(ctx, kind, reduced, out_dims));
  if (ran) return Status::ok();
  const ReducePlan plan = plan_reduce(x.dims(), reduced);
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor in, load_f32(x));
    SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, x.dtype(), out_dims));
    reduce_dispatch<float, float>(kind, plan, in.data_as<float>(),
                                  out.mutable_data_as<float>());
    return set_output_as(ctx, 0, out, x.dtype());
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, x.dtype(), out_dims));
  bool handled = visit_exact_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    reduce_dispatch<T, A>(kind, plan, x.data_as<T>(),
                          out->template mutable_data_as<T>());
  });
  if (!handled) {
    return ctx.unsupported_error("{} input", dtype_name(x.dtype()));
  }
  return Status::ok();
}

struct ReduceEntry {
  const char* op;
  ReduceKind kind;
};

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  const ReduceEntry entries[] = {
      {"ReduceSum", ReduceKind::kSum},
      {"ReduceMean", ReduceKind::kMean},
      {"ReduceMax", ReduceKind::kMax},
      {"ReduceMin", ReduceKind::kMin},
  };
  for (const ReduceEntry& entry : entries) {
    ReduceKind kind = entry.kind;
    table.add(CpuKernel{
        kOnnxDomain, entry.op,
        [kind](KernelContext& ctx) { return run_reduce(ctx, kind); }, nullptr});
  }
}

}  // namespace seqrt::cpu
