// CPU kernels of the comparisons (Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual: bool result) for every dtype with numpy broadcasting.
// Each dtype is read in its own type (f16/bf16 widened to f32, which is
// exact), so i64 compares exactly.
#include <type_traits>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/typed_support.h"

namespace seqrt::cpu {
namespace {

enum class Relation { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

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

struct CompareEntry {
  const char* op;
  Relation relation;
};

}  // namespace

void register_compare_kernels(KernelTable& table) {
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
}

}  // namespace seqrt::cpu
