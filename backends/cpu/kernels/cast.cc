// CPU kernels of Cast and CastLike: every element converted (any dtype
// pair) the way the reference converts, in parallel chunks.
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/elementwise/cast.h"
#include "ops/type_support.h"

namespace seqrt::cpu {
namespace {

// One element of S as D, the way the reference converts: floats through
// double (saturating, truncating into integers, NaN to 0), integers and
// bools exactly (wrapping into narrower integers, through double into
// floats).
template <typename D, typename S>
D convert_element(S x) {
  if constexpr (std::is_floating_point_v<S>) {
    return from_f64<D>(static_cast<double>(x));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(static_cast<double>(x));
  } else if constexpr (std::is_same_v<D, bool>) {
    return x != 0;
  } else {
    return static_cast<D>(static_cast<int64_t>(x));
  }
}

// Any dtype pair. f16/bf16 go through f32 at the edges (exact on load; on
// store the rounding the reference does); the rest is one typed loop per
// pair, in parallel chunks.
Status convert(KernelContext& ctx, const Tensor& x, DType to) {
  if (to == x.dtype()) {
    ctx.set_output(0, x);
    return Status::ok();
  }
  if (is_storage_only(x.dtype()) || is_storage_only(to)) {
    // Rare (weights loaded once, the node tests): the shared plain loop.
    SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.dims()));
    cast_storage_only(x, storage_cast_options(ctx), *y);
    return Status::ok();
  }
  Tensor src = x;
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(src, load_f32(x));
  }
  const DType direct = is_f32_family(to) ? DType::kF32 : to;
  SEQRT_ASSIGN_OR_RETURN(Tensor dst, Tensor::allocate(direct, x.dims()));
  auto visit = [](DType dtype, auto&& fn) {
    if (dtype == DType::kF32) return fn(float{}), true;
    return visit_exact_dtype(dtype, fn);
  };
  bool handled = visit(src.dtype(), [&](auto s_tag) {
    using S = decltype(s_tag);
    visit(dst.dtype(), [&](auto d_tag) {
      using D = decltype(d_tag);
      const S* in = src.data_as<S>();
      D* out = dst.mutable_data_as<D>();
      parallel_chunks(x.num_elements(), 65536, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          out[i] = convert_element<D, S>(in[i]);
        }
      });
    });
  });
  if (!handled) {
    return ctx.unsupported_error("cast from {} to {}", dtype_name(x.dtype()),
                                 dtype_name(to));
  }
  return set_output_as(ctx, 0, dst, to);
}

Status run_cast(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(DType to,
                         dtype_from_onnx_code(ctx, "to", ctx.attr_int("to")));
  return convert(ctx, *ctx.input(0), to);
}

// CastLike: the dtype of input 'target_type'.
Status run_cast_like(KernelContext& ctx) {
  if (!ctx.has_input(1)) return ctx.error("input 'target_type' is missing");
  return convert(ctx, *ctx.input(0), ctx.input(1)->dtype());
}

}  // namespace

void register_cast_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Cast", run_cast, nullptr});
  table.add(CpuKernel{kOnnxDomain, "CastLike", run_cast_like, nullptr});
}

}  // namespace seqrt::cpu
