// seqrt::RungeKutta on CUDA, as the CPU backend runs it: the body F runs
// through the executor's subgraph runner (each of its nodes on its CUDA
// kernel, which cuda_node_supported has checked), and the stage
// combinations are fused (kernels/runge_kutta.cu): one pass per stage
// writes the next stage's input and adds b_i·F_i to the sum; rk2_gated
// computes its gate and the mix in one pass per row.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/runge_kutta.h"
#include "backends/cuda/node_io.h"
#include "ops/control/subgraph.h"
#include "ops/sequence/runge_kutta.h"

namespace seqrt::cuda {
namespace {

using DeviceLaunch = std::function<cudaError_t(
    const std::vector<const float*>& in, const std::vector<float*>& out)>;

// Uploads the host tensors `inputs` (null stays null) into the node arena,
// runs `launch` with `outputs` blocks of `dims`, and returns those as host
// f32 tensors. The arena is the node's, reset here: the body's nodes,
// which run between the stages, reset it too, so nothing lives on the
// device across stages.
Result<std::vector<Tensor>> on_device(CudaContext& cuda,
                                      const std::vector<const Tensor*>& inputs,
                                      size_t outputs,
                                      const std::vector<int64_t>& dims,
                                      const DeviceLaunch& launch,
                                      const std::string& what) {
  const size_t out_bytes = sizeof(float) * element_count(dims);
  size_t device_bytes = outputs * DeviceArena::aligned(out_bytes);
  size_t staging_bytes = out_bytes;
  size_t upload_bytes = 0;
  for (const Tensor* tensor : inputs) {
    if (tensor == nullptr) continue;
    device_bytes += DeviceArena::aligned(tensor->byte_size());
    upload_bytes += DeviceArena::aligned(tensor->byte_size());
  }
  staging_bytes = std::max(staging_bytes, upload_bytes);
  DeviceArena& arena = cuda.arena();
  SEQRT_RETURN_IF_ERROR(arena.reserve(device_bytes));
  arena.reset();
  SEQRT_ASSIGN_OR_RETURN(void* staging, cuda.staging().reserve(staging_bytes));
  char* stage = static_cast<char*>(staging);
  std::vector<const float*> in;
  for (const Tensor* tensor : inputs) {
    if (tensor == nullptr) {
      in.push_back(nullptr);
      continue;
    }
    void* block = arena.take(tensor->byte_size());
    std::memcpy(stage, tensor->data(), tensor->byte_size());
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(block, stage, tensor->byte_size(),
                        cudaMemcpyHostToDevice, cuda.stream()),
        what);
    stage += DeviceArena::aligned(tensor->byte_size());
    in.push_back(static_cast<const float*>(block));
  }
  std::vector<float*> out;
  for (size_t i = 0; i < outputs; ++i) {
    out.push_back(static_cast<float*>(arena.take(out_bytes)));
  }
  SEQRT_CUDA_RETURN_IF_ERROR(launch(in, out), what);
  std::vector<Tensor> result;
  for (float* block : out) {
    SEQRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(DType::kF32, dims));
    // The staging buffer is reused by the next output: wait for each copy
    // (which also waits for the uploads before the launch).
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(staging, block, out_bytes, cudaMemcpyDeviceToHost,
                        cuda.stream()),
        what);
    SEQRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cuda.stream()), what);
    if (out_bytes > 0) std::memcpy(tensor.mutable_data(), staging, out_bytes);
    result.push_back(std::move(tensor));
  }
  return result;
}

class Stepper {
 public:
  Stepper(KernelContext& ctx, CudaContext& cuda, const RungeKuttaSetup& setup)
      : ctx_(ctx),
        cuda_(cuda),
        setup_(setup),
        y_(*ctx.input(0)),
        what_(ctx.node().label() + " stage combination") {}

  // F(input), checked to keep y's dtype and dims.
  Result<Tensor> evaluate(int stage, const Tensor& input) {
    SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                           run_body(ctx_, "body", *setup_.body, {input}));
    SEQRT_RETURN_IF_ERROR(check_stage_output(ctx_, stage, out[0], y_));
    return std::move(out[0]);
  }

  // {next = y + a·f, acc = acc_in + b·f}, or {acc} when !with_next.
  Result<std::vector<Tensor>> combine(const Tensor& f, float a, bool with_next,
                                      const Tensor& acc_in, float b) {
    const int64_t n = y_.num_elements();
    cudaStream_t stream = cuda_.stream();
    return on_device(
        cuda_, {&y_, &f, &acc_in}, with_next ? 2 : 1, y_.dims(),
        [&](const std::vector<const float*>& in,
            const std::vector<float*>& out) {
          float* next = with_next ? out[0] : nullptr;
          float* acc = out.back();
          return launch_rk_stage(in[0], in[1], a, next, in[2], b, acc, n,
                                 stream);
        },
        what_);
  }

  Result<Tensor> gated(const Tensor& f1, const Tensor& f2) {
    cudaStream_t stream = cuda_.stream();
    SEQRT_ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        on_device(
            cuda_, {&y_, &f1, &f2, ctx_.input(1), ctx_.input(2)}, 1, y_.dims(),
            [&](const std::vector<const float*>& in,
                const std::vector<float*>& out) {
              return launch_rk_gated(in[0], in[1], in[2], in[3], in[4], out[0],
                                     setup_.positions, setup_.width, stream);
            },
            what_));
    return std::move(out[0]);
  }

  Result<Tensor> step() {
    SEQRT_ASSIGN_OR_RETURN(Tensor f, evaluate(1, y_));
    switch (setup_.method) {
      case RungeKuttaMethod::kEuler: {
        SEQRT_ASSIGN_OR_RETURN(auto acc, combine(f, 0.0f, false, y_, 1.0f));
        return std::move(acc[0]);
      }
      case RungeKuttaMethod::kRk2: {
        SEQRT_ASSIGN_OR_RETURN(auto stage, combine(f, 1.0f, true, y_, 0.5f));
        SEQRT_ASSIGN_OR_RETURN(Tensor f2, evaluate(2, stage[0]));
        SEQRT_ASSIGN_OR_RETURN(auto acc,
                               combine(f2, 0.0f, false, stage[1], 0.5f));
        return std::move(acc[0]);
      }
      case RungeKuttaMethod::kRk2Gated: {
        // y + F1 as the "sum" of a pass with b = 1.
        SEQRT_ASSIGN_OR_RETURN(auto next, combine(f, 0.0f, false, y_, 1.0f));
        SEQRT_ASSIGN_OR_RETURN(Tensor f2, evaluate(2, next[0]));
        return gated(f, f2);
      }
      case RungeKuttaMethod::kRk4:
        break;
    }
    // c = (½, ½, 1), b = (1, 2, 2, 1)/6.
    const float c[] = {0.5f, 0.5f, 1.0f};
    const float b[] = {1.0f / 6, 2.0f / 6, 2.0f / 6, 1.0f / 6};
    Tensor acc = y_;
    for (int stage = 2; stage <= 4; ++stage) {
      SEQRT_ASSIGN_OR_RETURN(auto pass,
                             combine(f, c[stage - 2], true, acc, b[stage - 2]));
      acc = std::move(pass[1]);
      SEQRT_ASSIGN_OR_RETURN(f, evaluate(stage, pass[0]));
    }
    SEQRT_ASSIGN_OR_RETURN(auto last, combine(f, 0.0f, false, acc, b[3]));
    return std::move(last[0]);
  }

 private:
  KernelContext& ctx_;
  CudaContext& cuda_;
  const RungeKuttaSetup& setup_;
  const Tensor& y_;
  std::string what_;
};

Status run_runge_kutta(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(RungeKuttaSetup setup, check_runge_kutta(ctx));
  Stepper stepper(ctx, cuda, setup);
  SEQRT_ASSIGN_OR_RETURN(Tensor y_next, stepper.step());
  ctx.set_output(0, std::move(y_next));
  return Status::ok();
}

// y, the gate and y_next f32, and every node of the body on a CUDA kernel.
Status runge_kutta_supported(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  const Attribute* body = node.attr("body");
  if (body == nullptr || body->type() != AttrType::kGraph) {
    return unsupported("{}: no body graph", node.label());
  }
  const Graph& inner = *body->as_graph();
  for (const Node& body_node : inner.nodes) {
    Status status = cuda_node_supported(inner, body_node);
    if (!status.is_ok()) {
      return unsupported("{}: its body: {}", node.label(), status.message());
    }
  }
  return Status::ok();
}

}  // namespace

void add_runge_kutta_kernel(std::vector<CudaKernel>& kernels) {
  kernels.push_back(
      {kSeqrtDomain, "RungeKutta", runge_kutta_supported, run_runge_kutta});
}

}  // namespace seqrt::cuda
