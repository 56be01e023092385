// The direct convolution of kernels/conv.cu (ONNX Conv, 1-D and 2-D,
// grouped and depthwise): its geometry from the node's attributes and the
// sum of one output element, inline for the host and the device so
// shape_plan_test.cc checks what the GPU computes against the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "graph/status.h"

namespace seqrt::cuda {

// 1-D convolutions are 2-D ones with height 1 (stride and dilation 1, no
// pad on that axis).
struct ConvShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0;
  int64_t group_channels = 0;     // W's dim 1: input channels per group
  int64_t outputs_per_group = 0;  // M / group
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1, k_h = 1, k_w = 1;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_h = 0, pad_w = 0;  // pads before each axis
  int64_t outputs() const { return batch * out_channels * out_h * out_w; }
};

// Output element i (row-major over (N, M, out_h, out_w)) without the bias.
SEQRT_HOST_DEVICE inline float conv_output(const ConvShape& s, const float* x,
                                           const float* w, int64_t i) {
  const int64_t ox = i % s.out_w;
  const int64_t oy = (i / s.out_w) % s.out_h;
  const int64_t m = (i / (s.out_w * s.out_h)) % s.out_channels;
  const int64_t n = i / (s.out_w * s.out_h * s.out_channels);
  const int64_t first = m / s.outputs_per_group * s.group_channels;
  float sum = 0.0f;
  for (int64_t c = 0; c < s.group_channels; ++c) {
    const float* xc = x + ((n * s.in_channels + first + c) * s.in_h) * s.in_w;
    const float* wc = w + ((m * s.group_channels + c) * s.k_h) * s.k_w;
    for (int64_t ky = 0; ky < s.k_h; ++ky) {
      const int64_t y = oy * s.stride_h - s.pad_h + ky * s.dil_h;
      if (y < 0 || y >= s.in_h) continue;
      for (int64_t kx = 0; kx < s.k_w; ++kx) {
        const int64_t xx = ox * s.stride_w - s.pad_w + kx * s.dil_w;
        if (xx < 0 || xx >= s.in_w) continue;
        sum += xc[y * s.in_w + xx] * wc[ky * s.k_w + kx];
      }
    }
  }
  return sum;
}

// From X (N, C, [H,] W), W (M, C/group, [kH,] kW), the output dims the
// op's shape inference gave and the attributes (empty lists: defaults).
// The begin pads follow auto_pad as the reference kernel does.
Result<ConvShape> conv_shape(const std::vector<int64_t>& x_dims,
                             const std::vector<int64_t>& w_dims,
                             const std::vector<int64_t>& out_dims,
                             int64_t group, const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dilations,
                             const std::vector<int64_t>& pads,
                             const std::string& auto_pad);

}  // namespace seqrt::cuda
