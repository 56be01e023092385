// CPU kernels of the logical ops on bool tensors: And, Or, Xor (numpy
// broadcasting) and Not.
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/typed_support.h"

namespace seqrt::cpu {
namespace {

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

struct LogicEntry {
  const char* op;
  Logic logic;
};

}  // namespace

void register_logical_kernels(KernelTable& table) {
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
}

}  // namespace seqrt::cpu
