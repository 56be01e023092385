// Which fp32 weights a backend may store as fp16 (IEEE half): the constant
// B operands of matrix products, halving their memory and the bandwidth a
// decode step spends reading them, while the product still accumulates in
// fp32. The graph is left as it is (the values stay fp32 to inference and
// the memory plan); the backend converts the selected constants when it
// uploads them and hands its kernels their fp16 dtype. The Vulkan backend
// does so under SEQRT_VULKAN_FP16_WEIGHTS.
#pragma once

#include <set>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Whether `node` reads a weight at input 1 that a backend may store as
// fp16: MatMul, Gemm and seqrt::Linear.
bool takes_half_weight(const Node& node);

// The fp32 constants of `graph` (not of its subgraphs) that such nodes read
// at input 1 and that nothing else reads: no other input, graph output or
// state pair, so the fp32 copy is not needed on the device.
std::set<ValueId> select_half_weights(const Graph& graph);

// `weight` (fp32) rounded to fp16, to nearest even.
Result<Tensor> to_half(const Tensor& weight);

}  // namespace seqrt
