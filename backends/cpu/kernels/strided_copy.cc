#include "backends/cpu/kernels/strided_copy.h"

#include <cstring>

#include "backends/cpu/kernels/float_support.h"

namespace seqrt::cpu {
namespace {

// Copies the strided view in[Σ c_d·strides_d] of `dims` into the
// contiguous `out`: axes are merged where the view is contiguous across
// them, and runs along a unit-stride last axis are one memcpy each.
void copy_view(const char* in, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& strides, size_t element, char* out) {
  std::vector<int64_t> d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = strides[i];
      continue;
    }
    d.push_back(dims[i]);
    s.push_back(strides[i]);
  }
  if (d.empty()) {
    d = {1};
    s = {1};
  }
  int64_t total = 1;
  for (int64_t n : dims) total *= n;
  const int64_t length = d.back();
  const int64_t runs = length == 0 ? 0 : total / length;
  const bool contiguous = s.back() == 1;
  const size_t outer = d.size() - 1;
  parallel_chunks(runs, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r;
      int64_t offset = 0;
      for (size_t i = outer; i-- > 0;) {
        offset += (rest % d[i]) * s[i];
        rest /= d[i];
      }
      char* dst = out + static_cast<size_t>(r * length) * element;
      // Signed byte offsets: negative strides (reversed slices) step back.
      const int64_t bytes = static_cast<int64_t>(element);
      if (contiguous) {
        std::memcpy(dst, in + offset * bytes, length * element);
        continue;
      }
      for (int64_t j = 0; j < length; ++j) {
        std::memcpy(dst + j * element, in + (offset + j * s.back()) * bytes,
                    element);
      }
    }
  });
}

}  // namespace

Status run_strided(KernelContext& ctx, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& strides, int64_t base,
                   size_t i) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(i, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  size_t element = dtype_size(in.dtype());
  copy_view(static_cast<const char*>(in.data()) + base * element, dims, strides,
            element, static_cast<char*>(out->mutable_data()));
  return Status::ok();
}

}  // namespace seqrt::cpu
