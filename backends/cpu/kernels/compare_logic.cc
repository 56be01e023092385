// CPU kernels of the comparisons (Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual: bool result), the logical ops (And, Or, Xor, Not) and
// Where, for every dtype with numpy broadcasting. Comparisons read each
// dtype in its own type (f16/bf16 widened to f32, which is exact), so i64
// compares exactly; Where moves elements as bytes of their width.
#include <cstring>
#include <type_traits>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/typed_support.h"

namespace seqrt::cpu {
namespace {

enum class Relation { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

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

template <typename T>
Status compare_typed(KernelContext& ctx, Relation relation, const Tensor& a,
                     const Tensor& b) {
  switch (relation) {
    case Relation::kEqual:
      return compare_with<T>(ctx, a, b, [](T x, T y) { return x == y; });
    case Relation::kLess:
      return compare_with<T>(ctx, a, b, [](T x, T y) { return x < y; });
    case Relation::kGreater:
      return compare_with<T>(ctx, a, b, [](T x, T y) { return x > y; });
    case Relation::kLessOrEqual:
      return compare_with<T>(ctx, a, b, [](T x, T y) { return x <= y; });
    case Relation::kGreaterOrEqual:
      return compare_with<T>(ctx, a, b, [](T x, T y) { return x >= y; });
  }
  return internal_error("{}: unknown relation", ctx.node().label());
}

Status check_two_same(const KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) {
    return ctx.error("needs inputs 'A' and 'B'");
  }
  if (ctx.input(0)->dtype() != ctx.input(1)->dtype()) {
    return ctx.error("inputs 'A' and 'B' must have one dtype, got {} and {}",
                     dtype_name(ctx.input(0)->dtype()),
                     dtype_name(ctx.input(1)->dtype()));
  }
  return Status::ok();
}

Status run_compare(KernelContext& ctx, Relation relation) {
  SEQRT_RETURN_IF_ERROR(check_two_same(ctx));
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  if (is_f32_family(a.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(a));
    SEQRT_ASSIGN_OR_RETURN(Tensor y, load_f32(b));
    return compare_typed<float>(ctx, relation, x, y);
  }
  Status status = Status::ok();
  bool handled = visit_exact_dtype(a.dtype(), [&](auto tag) {
    status = compare_typed<decltype(tag)>(ctx, relation, a, b);
  });
  if (!handled) {
    return ctx.unsupported_error("{} inputs", dtype_name(a.dtype()));
  }
  return status;
}

enum class Logic { kAnd, kOr, kXor };

Status run_logic(KernelContext& ctx, Logic logic) {
  SEQRT_RETURN_IF_ERROR(check_two_same(ctx));
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  if (a.dtype() != DType::kBool) {
    return ctx.error("inputs must be bool, got {}", dtype_name(a.dtype()));
  }
  switch (logic) {
    case Logic::kAnd:
      return compare_with<bool>(ctx, a, b,
                                [](bool x, bool y) { return x && y; });
    case Logic::kOr:
      return compare_with<bool>(ctx, a, b,
                                [](bool x, bool y) { return x || y; });
    case Logic::kXor:
      return compare_with<bool>(ctx, a, b,
                                [](bool x, bool y) { return x != y; });
  }
  return internal_error("{}: unknown logical op", ctx.node().label());
}

Status run_not(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  if (x.dtype() != DType::kBool) {
    return ctx.error("input must be bool, got {}", dtype_name(x.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, DType::kBool, x.dims()));
  const bool* px = x.data_as<bool>();
  bool* py = y->mutable_data_as<bool>();
  parallel_chunks(x.num_elements(), 65536, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) py[i] = !px[i];
  });
  return Status::ok();
}

// Where on elements of width sizeof(T), as unsigned integers of that width.
template <typename T>
void where_runs(const BroadcastRuns& plan, const bool* c, const T* x,
                const T* y, T* out) {
  const int64_t length = plan.run_length();
  const int64_t sc = plan.step(0), sx = plan.step(1), sy = plan.step(2);
  for_each_broadcast_run(plan, [&](const int64_t* offsets, int64_t o) {
    const bool* pc = c + offsets[0];
    const T* px = x + offsets[1];
    const T* py = y + offsets[2];
    T* po = out + o;
    if (sc == 1 && sx == 1 && sy == 1) {
      for (int64_t j = 0; j < length; ++j) po[j] = pc[j] ? px[j] : py[j];
      return;
    }
    for (int64_t j = 0; j < length; ++j) {
      po[j] = pc[j * sc] ? px[j * sx] : py[j * sy];
    }
  });
}

Status run_where(KernelContext& ctx) {
  const Tensor& condition = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const Tensor& y = *ctx.input(2);
  if (condition.dtype() != DType::kBool) {
    return ctx.error("input 'condition' must be bool, got {}",
                     dtype_name(condition.dtype()));
  }
  if (x.dtype() != y.dtype()) {
    return ctx.error("inputs 'X' and 'Y' must have one dtype, got {} and {}",
                     dtype_name(x.dtype()), dtype_name(y.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(
      BroadcastRuns plan,
      plan_broadcast_runs(ctx, {condition.dims(), x.dims(), y.dims()}));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, x.dtype(), plan.out_dims));
  const bool* pc = condition.data_as<bool>();
  void* po = out->mutable_data();
  switch (dtype_size(x.dtype())) {
    case 1:
      where_runs(plan, pc, static_cast<const uint8_t*>(x.data()),
                 static_cast<const uint8_t*>(y.data()),
                 static_cast<uint8_t*>(po));
      break;
    case 2:
      where_runs(plan, pc, static_cast<const uint16_t*>(x.data()),
                 static_cast<const uint16_t*>(y.data()),
                 static_cast<uint16_t*>(po));
      break;
    case 4:
      where_runs(plan, pc, static_cast<const uint32_t*>(x.data()),
                 static_cast<const uint32_t*>(y.data()),
                 static_cast<uint32_t*>(po));
      break;
    case 8:
      where_runs(plan, pc, static_cast<const uint64_t*>(x.data()),
                 static_cast<const uint64_t*>(y.data()),
                 static_cast<uint64_t*>(po));
      break;
    default:
      return ctx.unsupported_error("{} elements", dtype_name(x.dtype()));
  }
  return Status::ok();
}

struct CompareEntry {
  const char* op;
  Relation relation;
};

struct LogicEntry {
  const char* op;
  Logic logic;
};

}  // namespace

void register_compare_logic_kernels(KernelTable& table) {
  const CompareEntry compares[] = {
      {"Equal", Relation::kEqual},
      {"Less", Relation::kLess},
      {"Greater", Relation::kGreater},
      {"LessOrEqual", Relation::kLessOrEqual},
      {"GreaterOrEqual", Relation::kGreaterOrEqual},
  };
  for (const CompareEntry& entry : compares) {
    Relation relation = entry.relation;
    table.add(CpuKernel{
        kOnnxDomain, entry.op,
        [relation](KernelContext& ctx) { return run_compare(ctx, relation); },
        nullptr});
  }
  const LogicEntry logics[] = {
      {"And", Logic::kAnd}, {"Or", Logic::kOr}, {"Xor", Logic::kXor}};
  for (const LogicEntry& entry : logics) {
    Logic logic = entry.logic;
    table.add(
        CpuKernel{kOnnxDomain, entry.op,
                  [logic](KernelContext& ctx) { return run_logic(ctx, logic); },
                  nullptr});
  }
  table.add(CpuKernel{kOnnxDomain, "Not", run_not, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Where", run_where, nullptr});
}

}  // namespace seqrt::cpu
