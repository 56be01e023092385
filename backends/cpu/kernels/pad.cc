// CPU kernel of Pad (constant, reflect, edge, wrap), generic over dtypes:
// each output row copies its inner run with memcpy and fills or mirrors the
// edges; rows split by row_split.h.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/row_split.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status run_pad(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(auto pads, read_int_list(ctx, *ctx.input(1), "pads"));
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
  } else {
    for (size_t d = 0; d < in.rank(); ++d)
      axes.push_back(static_cast<int64_t>(d));
  }
  SEQRT_ASSIGN_OR_RETURN(
      axes, normalize_axes(ctx, axes, static_cast<int64_t>(in.rank())));
  const Tensor* fill = ctx.input(2);
  if (fill && (fill->dtype() != in.dtype() || fill->num_elements() != 1)) {
    return ctx.error("constant_value must be one {} value",
                     dtype_name(in.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  if (in.rank() == 0) {  // nothing to pad: the scalar itself
    std::memcpy(out->mutable_data(), in.data(), dtype_size(in.dtype()));
    return Status::ok();
  }
  std::vector<int64_t> begin(in.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = pads[i];
  const std::string& mode = ctx.attr_string("mode");
  // Per axis, the source index of every output position (-1: constant).
  std::vector<std::vector<int64_t>> maps(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) {
    for (int64_t i = 0; i < dims[d]; ++i) {
      maps[d].push_back(pad_source_index(mode, i - begin[d], in.dim(d)));
    }
  }
  const size_t element = dtype_size(in.dtype());
  const std::vector<int64_t> strides = strides_of(in.dims());
  const size_t last = in.rank() - 1;
  const int64_t length = dims.back();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  const std::vector<int64_t>& inner = maps[last];
  parallel_chunks(num_rows(dims), row_grain(dims), [&](int64_t b, int64_t e) {
    std::vector<int64_t> coords(dims.size(), 0);
    for (int64_t row = b; row < e; ++row) {
      row_coords(dims, row, coords);
      int64_t base = 0;
      for (size_t d = 0; d < last && base >= 0; ++d) {
        int64_t index = maps[d][coords[d]];
        base = index < 0 ? -1 : base + index * strides[d];
      }
      uint8_t* out_row = dst + static_cast<size_t>(row * length) * element;
      for (int64_t j = 0; j < length; ++j) {
        int64_t index = base < 0 ? -1 : inner[j];
        // Runs of consecutive sources (the unpadded middle) in one copy.
        int64_t run = 1;
        while (index >= 0 && j + run < length &&
               inner[j + run] == index + run) {
          ++run;
        }
        if (index >= 0) {
          std::memcpy(out_row + j * element, src + (base + index) * element,
                      static_cast<size_t>(run) * element);
        } else if (fill != nullptr) {
          std::memcpy(out_row + j * element, fill->data(), element);
        }  // else: the output is zero-filled already
        j += run - 1;
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_pad_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Pad", run_pad, nullptr});
}

}  // namespace seqrt::cpu
