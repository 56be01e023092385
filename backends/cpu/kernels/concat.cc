// CPU kernel of Concat, generic over dtypes: each input's rows copied as
// blocks into the output rows, or oneDNN's concat for f32 inputs where the
// measurement chose it (../onednn/selection.h).
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/onednn/concat.h"
#include "backends/cpu/onednn/selection.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Concat of f32 inputs on oneDNN's concat primitive when the measurement
// chose it. False: the own copy loop runs the node.
Result<bool> run_onednn_concat(KernelContext& ctx,
                               const std::vector<int64_t>& dims, int64_t axis) {
  std::vector<std::vector<int64_t>> in_dims;
  std::vector<const float*> srcs;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    if (in.dtype() != DType::kF32) return false;
    in_dims.push_back(in.dims());
    srcs.push_back(in.data_as<float>());
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (!onednn::use_onednn(onednn::OpClass::kConcat, count)) return false;
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kF32, dims));
  return onednn::concat(ctx.node().label(), in_dims, srcs, axis,
                        out->mutable_data_as<float>());
}

Status run_concat(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& first = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(first.rank())));
  SEQRT_ASSIGN_OR_RETURN(bool ran, run_onednn_concat(ctx, dims, axis));
  if (ran) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, first.dtype(), dims));
  const size_t element = dtype_size(first.dtype());
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t out_row = static_cast<size_t>(dims[axis] * inner) * element;
  char* dst = static_cast<char*>(out->mutable_data());
  size_t offset = 0;  // bytes into each output row
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    const size_t row = static_cast<size_t>(in.dim(axis) * inner) * element;
    const char* src = static_cast<const char*>(in.data());
    if (row > 0) {
      parallel_chunks(outer, 1024, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          std::memcpy(dst + o * out_row + offset, src + o * row, row);
        }
      });
    }
    offset += row;
  }
  return Status::ok();
}

}  // namespace

void register_concat_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Concat", run_concat, nullptr});
}

}  // namespace seqrt::cpu
