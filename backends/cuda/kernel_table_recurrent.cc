// The CUDA kernel table's recurrent ops RNN, GRU and LSTM (ops/rnn/), f32.
// The attributes, shapes and sequence_lens are checked by the op's own
// rnn_config / check_rnn; then X·Wᵀ of every step is one cuBLASLt GEMM per
// direction and kernels/rnn.cu runs the recurrence (design: rnn_plan.h).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/gemm.h"
#include "backends/cuda/kernels/rnn.h"
#include "backends/cuda/node_io.h"
#include "backends/cuda/rnn_plan.h"
#include "ops/rnn/rnn_common.h"

namespace seqrt::cuda {
namespace {

// Every tensor f32 but sequence_lens (integer lengths, read on the host).
Status rnn_dtypes(const Graph& graph, const Node& node) {
  auto check = [&](ValueId id) -> Status {
    if (id == kNoValue || graph.value(id).dtype == DType::kF32) {
      return Status::ok();
    }
    return unsupported(
        "{}: the cuda backend runs this op in f32 only, '{}' is {}",
        node.label(), graph.value(id).name, dtype_name(graph.value(id).dtype));
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (i != kRnnSequenceLens) SEQRT_RETURN_IF_ERROR(check(node.inputs[i]));
  }
  for (ValueId id : node.outputs) SEQRT_RETURN_IF_ERROR(check(id));
  return Status::ok();
}

// X·Wᵀ of every row of X, per direction, into xw (directions, rows, gh).
Status project_inputs(const RnnDims& d, int64_t gh, const float* x,
                      const float* w, float* xw, CudaContext& cuda,
                      const std::string& what) {
  const int64_t rows = d.seq * d.batch;
  if (rows == 0 || gh == 0) return Status::ok();
  if (d.input == 0) {  // an empty sum: the biases alone, added per step
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(xw, 0, sizeof(float) * d.directions * rows * gh,
                        cuda.stream()),
        what);
    return Status::ok();
  }
  for (int64_t dir = 0; dir < d.directions; ++dir) {
    SEQRT_RETURN_IF_ERROR(
        gemm_ex_f32(cuda.cublas(), cuda.stream(), x, w + dir * gh * d.input,
                    xw + dir * rows * gh, rows, gh, d.input,
                    /*trans_a=*/false, /*trans_b=*/true, 1.0f, 0.0f)
            .with_context(what));
  }
  return Status::ok();
}

Status run_recurrent(KernelContext& ctx, CudaContext& cuda, RnnKind kind) {
  SEQRT_ASSIGN_OR_RETURN(RnnConfig config, rnn_config(ctx, kind));
  SEQRT_ASSIGN_OR_RETURN(RnnDims dims, check_rnn(ctx, config));
  const std::vector<int64_t> lens = rnn_sequence_lengths(ctx, dims);
  const RnnCell cell = rnn_cell_from_config(config);
  const RnnScratch plan =
      plan_rnn_scratch(cell, dims.seq, dims.batch, dims.hidden);
  // Every output up to the last the node wants; one left out before it
  // (Y with Y_h wanted) is computed and dropped.
  const size_t count = kind == RnnKind::kLstm ? 3 : 2;
  size_t wanted = 0;
  for (size_t i = 0; i < count; ++i) {
    if (wants_output(ctx, i)) wanted = i + 1;
  }
  std::vector<std::vector<int64_t>> outputs;
  for (size_t i = 0; i < wanted; ++i) {
    outputs.push_back(i == kRnnY ? rnn_y_dims(config, dims)
                                 : rnn_state_dims(config, dims));
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(outputs, plan.total));
  const std::string what = ctx.node().label();
  cudaStream_t stream = cuda.stream();
  // Y is zero past each row's length, Y_h/Y_c for rows of length 0.
  for (size_t i = 0; i < outputs.size(); ++i) {
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(io.output(i), 0,
                        sizeof(float) * element_count(outputs[i]), stream),
        what);
  }
  float* scratch = io.scratch();
  int64_t* lens_device = reinterpret_cast<int64_t*>(scratch + plan.lens);
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(lens_device, lens.data(), sizeof(int64_t) * lens.size(),
                      cudaMemcpyHostToDevice, stream),
      what);
  const int64_t gh = config.gates * dims.hidden;
  SEQRT_RETURN_IF_ERROR(project_inputs(dims, gh, io.input(kRnnX),
                                       io.input(kRnnW), scratch + plan.xw, cuda,
                                       what));
  const bool lstm = kind == RnnKind::kLstm;
  float* c = lstm ? scratch + plan.c : nullptr;
  SEQRT_CUDA_RETURN_IF_ERROR(
      launch_rnn_init_state(cell, dims.batch, dims.hidden,
                            io.input(kRnnInitialH),
                            lstm ? io.input(kRnnInitialC) : nullptr,
                            scratch + plan.h0, c, stream),
      what);
  RnnStepArgs args;
  args.cell = cell;
  args.seq = dims.seq;
  args.batch = dims.batch;
  args.hidden = dims.hidden;
  args.lens = lens_device;
  args.xw = scratch + plan.xw;
  args.r = io.input(kRnnR);
  args.bias = io.input(kRnnB);
  args.peep = lstm ? io.input(kRnnP) : nullptr;
  args.c = c;
  args.z = scratch + plan.z;
  args.rh = scratch + plan.rh;
  args.y = outputs.empty() ? nullptr : io.output(kRnnY);
  // Steps past every row's length would only carry the state.
  const int64_t steps =
      lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
  const float* final_h = nullptr;
  SEQRT_CUDA_RETURN_IF_ERROR(
      launch_rnn_steps(args, scratch + plan.h0, scratch + plan.h1, steps,
                       &final_h, stream),
      what);
  auto output = [&](size_t i) {
    return i < outputs.size() ? io.output(i) : nullptr;
  };
  return io.finish(launch_rnn_store_state(
                       cell, dims.batch, dims.hidden, lens_device, final_h, c,
                       output(kRnnYh), output(kRnnYc), stream),
                   what.c_str());
}

}  // namespace

void add_recurrent_kernels(std::vector<CudaKernel>& kernels) {
  kernels.push_back({kOnnxDomain, "RNN", rnn_dtypes,
                     [](KernelContext& ctx, CudaContext& cuda) {
                       return run_recurrent(ctx, cuda, RnnKind::kRnn);
                     }});
  kernels.push_back({kOnnxDomain, "GRU", rnn_dtypes,
                     [](KernelContext& ctx, CudaContext& cuda) {
                       return run_recurrent(ctx, cuda, RnnKind::kGru);
                     }});
  kernels.push_back({kOnnxDomain, "LSTM", rnn_dtypes,
                     [](KernelContext& ctx, CudaContext& cuda) {
                       return run_recurrent(ctx, cuda, RnnKind::kLstm);
                     }});
}

}  // namespace seqrt::cuda
