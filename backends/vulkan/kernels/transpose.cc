// Transpose: the strided-copy shader (strided_copy.h) reading the input
// with permuted strides (f32, i32, i64).
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/strided_copy.h"

namespace seqrt::vulkan {
namespace {

Status record_transpose(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  size_t rank = in.size();
  std::vector<int64_t> perm(rank);
  const Attribute* attr = args.node->attr("perm");
  for (size_t i = 0; i < rank; ++i) {
    perm[i] = attr != nullptr ? attr->as_ints()[i]
                              : static_cast<int64_t>(rank - 1 - i);
  }
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> src_strides(rank);
  for (size_t i = 0; i < rank; ++i) src_strides[i] = in_strides[perm[i]];
  return strided_copy(args.inputs[0], args.outputs[0], args.output_dims[0],
                      src_strides, row_major_strides(args.output_dims[0]), 0, 0,
                      element_words(args.output_dtypes[0]), *args.node,
                      recorder);
}

}  // namespace

void register_transpose_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Transpose", supports_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_transpose(args, r);
             }});
}

}  // namespace seqrt::vulkan
