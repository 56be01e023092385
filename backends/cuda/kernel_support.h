// Helpers shared by the files of the CUDA kernel table (kernel_table.cc
// and the kernel_table_*.cc groups it gathers).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernels/elementwise.h"

namespace seqrt::cuda {

// Every input and output f32. fp16/bf16 and integer tensors are not
// computed on yet, so they are declared unsupported rather than converted.
Status all_f32(const Graph& graph, const Node& node);
// Input 0 and every output f32; other inputs (axes, positions) are read on
// the host or as indices.
Status data_f32(const Graph& graph, const Node& node);
// Ops that move bytes: every dtype.
Status any_dtype(const Graph& graph, const Node& node);

// The node's int attribute `name`, or `fallback` when it is not set.
int64_t int_attr(const Node& node, const char* name, int64_t fallback);

// Whether the node produces output i (present and not omitted).
bool wants_output(const KernelContext& ctx, size_t i);

// A planner refusal, restated with the node's name.
Status plan_error(const KernelContext& ctx, const Status& status);

// The dims and dtypes of the node's outputs as the op's own shape
// inference gives them for these concrete inputs (whose values it may
// read: Reshape's shape, Slice's starts), with its error messages for bad
// inputs.
struct OutputTypes {
  std::vector<std::vector<int64_t>> dims;
  std::vector<DType> dtypes;
};
Result<OutputTypes> infer_outputs(const KernelContext& ctx);

// ONNX broadcasting of two operands: their strides over the output's dims.
Result<BroadcastIndex> broadcast(const Node& node, const Tensor& a,
                                 const Tensor& b,
                                 std::vector<int64_t>& out_dims);

// The groups of kernel_table_*.cc.
void add_sequence_kernels(std::vector<CudaKernel>& kernels);
void add_data_movement_kernels(std::vector<CudaKernel>& kernels);
void add_math_kernels(std::vector<CudaKernel>& kernels);
void add_runge_kutta_kernel(std::vector<CudaKernel>& kernels);
void add_shape_kernels(std::vector<CudaKernel>& kernels);
void add_recurrent_kernels(std::vector<CudaKernel>& kernels);
void add_scatter_kernels(std::vector<CudaKernel>& kernels);

}  // namespace seqrt::cuda
