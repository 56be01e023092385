// CPU kernel of Where for every dtype with numpy broadcasting: elements move
// as bytes of their width.
#include <cstring>
#include <type_traits>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/typed_support.h"

namespace seqrt::cpu {
namespace {

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

}  // namespace

void register_where_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Where", run_where, nullptr});
}

}  // namespace seqrt::cpu
