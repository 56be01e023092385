// The CUDA kernel table's data-movement ops, for every dtype: Transpose,
// Expand, Slice, Concat and Split as strided copies (copy_plan.h), the
// reshaping ops as one device copy, Gather, Where and Trilu. Output shapes
// and input checks come from each op's own shape inference
// (infer_outputs); integer inputs that steer the op (starts, indices, k)
// are read and checked on the host before anything is uploaded.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/copy.h"
#include "backends/cuda/node_io.h"
#include "ops/shape/shape_util.h"

namespace seqrt::cuda {
namespace {

struct CopyJob {
  size_t input;
  size_t output;
  StridedCopy copy;
};

// Uploads the inputs, runs `jobs` (strided copies of input 0's element
// size) and brings the outputs back.
Status run_copies(KernelContext& ctx, CudaContext& cuda, const OutputTypes& out,
                  const std::vector<CopyJob>& jobs) {
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const size_t element_size = dtype_size(ctx.input(0)->dtype());
  cudaError_t launch = cudaSuccess;
  for (const CopyJob& job : jobs) {
    cudaError_t error =
        launch_strided_copy(io.raw_input(job.input), io.raw_output(job.output),
                            element_size, job.copy, cuda.stream());
    if (launch == cudaSuccess) launch = error;
  }
  const std::string what = ctx.node().label();
  return io.finish(launch, what.c_str());
}

// The plan's output dims must be what inference said; a difference is our
// bug, reported rather than written out of bounds.
Status same_dims(const KernelContext& ctx, const std::vector<int64_t>& plan,
                 const std::vector<int64_t>& inferred) {
  if (plan == inferred) return Status::ok();
  return make_error(
      StatusCode::kInternal, "{}: cuda copy plan gives {}, shape inference {}",
      ctx.node().label(), dims_to_string(plan), dims_to_string(inferred));
}

Status run_transpose(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& dims = ctx.input(0)->dims();
  std::vector<int64_t> perm;
  if (ctx.node().attr("perm") != nullptr) {
    perm = ctx.attr_ints("perm");
  } else {
    for (size_t a = dims.size(); a-- > 0;) perm.push_back(a);
  }
  Result<StridedCopy> copy = transpose_copy(dims, perm);
  if (!copy.is_ok()) return plan_error(ctx, copy.status());
  return run_copies(ctx, cuda, out, {{0, 0, *copy}});
}

Status run_expand(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  Result<StridedCopy> copy = broadcast_copy(ctx.input(0)->dims(), out.dims[0]);
  if (!copy.is_ok()) return plan_error(ctx, copy.status());
  return run_copies(ctx, cuda, out, {{0, 0, *copy}});
}

Status run_slice(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& dims = ctx.input(0)->dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                         read_int_list(ctx, *ctx.input(1), "starts"));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> ends,
                         read_int_list(ctx, *ctx.input(2), "ends"));
  std::vector<int64_t> axes, steps;
  if (ctx.input(3) != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
  } else {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(k);
  }
  if (ctx.input(4) != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(steps, read_int_list(ctx, *ctx.input(4), "steps"));
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ctx.error("starts, ends, axes and steps must have one length");
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> normal,
                         normalize_axes(ctx, axes, rank));
  std::vector<int64_t> all_starts(rank, 0), all_steps(rank, 1);
  std::vector<int64_t> all_ends(rank, std::numeric_limits<int64_t>::max());
  for (size_t k = 0; k < normal.size(); ++k) {
    all_starts[normal[k]] = starts[k];
    all_ends[normal[k]] = ends[k];
    all_steps[normal[k]] = steps[k];
  }
  std::vector<int64_t> out_dims;
  Result<StridedCopy> copy =
      slice_copy(dims, all_starts, all_ends, all_steps, out_dims);
  if (!copy.is_ok()) return plan_error(ctx, copy.status());
  SEQRT_RETURN_IF_ERROR(same_dims(ctx, out_dims, out.dims[0]));
  return run_copies(ctx, cuda, out, {{0, 0, *copy}});
}

Result<size_t> axis_of(const KernelContext& ctx, int64_t axis, size_t rank) {
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<int64_t> normal,
      normalize_axes(ctx, {axis}, static_cast<int64_t>(rank)));
  return static_cast<size_t>(normal[0]);
}

// Each input goes to its place along the axis of the output.
Status run_concat(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& whole = out.dims[0];
  SEQRT_ASSIGN_OR_RETURN(size_t axis,
                         axis_of(ctx, ctx.attr_int("axis"), whole.size()));
  std::vector<CopyJob> jobs;
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const std::vector<int64_t>& part = ctx.input(i)->dims();
    Result<StridedCopy> copy = place_part_copy(part, whole, axis, offset, true);
    if (!copy.is_ok()) return plan_error(ctx, copy.status());
    jobs.push_back({i, 0, *copy});
    offset += part[axis];
  }
  return run_copies(ctx, cuda, out, jobs);
}

// Each output is cut from its place along the axis of the input.
Status run_split(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& whole = ctx.input(0)->dims();
  SEQRT_ASSIGN_OR_RETURN(size_t axis,
                         axis_of(ctx, ctx.attr_int("axis"), whole.size()));
  std::vector<CopyJob> jobs;
  int64_t offset = 0;
  for (size_t o = 0; o < out.dims.size(); ++o) {
    Result<StridedCopy> copy =
        place_part_copy(out.dims[o], whole, axis, offset, false);
    if (!copy.is_ok()) return plan_error(ctx, copy.status());
    jobs.push_back({0, o, *copy});
    offset += out.dims[o][axis];
  }
  return run_copies(ctx, cuda, out, jobs);
}

// Reshape, Squeeze, Unsqueeze, Flatten, Identity: the same bytes under
// new dims.
Status run_reshaping(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const size_t bytes = ctx.input(0)->byte_size();
  cudaError_t launch = cudaSuccess;
  if (bytes > 0) {
    launch = cudaMemcpyAsync(io.raw_output(0), io.raw_input(0), bytes,
                             cudaMemcpyDeviceToDevice, cuda.stream());
  }
  const std::string what = ctx.node().label();
  return io.finish(launch, what.c_str());
}

Status run_gather(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) {
    return ctx.error("indices must be int32 or int64, got {}",
                     dtype_name(indices.dtype()));
  }
  std::vector<int64_t> index(static_cast<size_t>(indices.num_elements()));
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    index[i] = indices.element_i64(i);
  }
  Result<GatherShape> shape =
      gather_shape(data.dims(), ctx.attr_int("axis"), index);
  if (!shape.is_ok()) return plan_error(ctx, shape.status());
  NodeIo io(ctx, cuda);
  // The checked indices, as int64, in the scratch block.
  const int64_t scratch_floats =
      static_cast<int64_t>(index.size() * sizeof(int64_t) / sizeof(float));
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, scratch_floats, out.dtypes));
  const std::string what = ctx.node().label();
  auto* device_index = reinterpret_cast<int64_t*>(io.scratch());
  if (!index.empty()) {
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(device_index, index.data(),
                        index.size() * sizeof(int64_t), cudaMemcpyHostToDevice,
                        cuda.stream()),
        what);
  }
  return io.finish(
      launch_gather(io.raw_input(0), device_index, io.raw_output(0),
                    dtype_size(data.dtype()), *shape, cuda.stream()),
      what.c_str());
}

Status run_where(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  if (ctx.input(0)->dtype() != DType::kBool) {
    return ctx.error("condition must be bool, got {}",
                     dtype_name(ctx.input(0)->dtype()));
  }
  std::vector<int64_t> out_dims;
  Result<SelectIndex> index =
      select_index(ctx.input(0)->dims(), ctx.input(1)->dims(),
                   ctx.input(2)->dims(), out_dims);
  if (!index.is_ok()) return plan_error(ctx, index.status());
  SEQRT_RETURN_IF_ERROR(same_dims(ctx, out_dims, out.dims[0]));
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(
      launch_where(static_cast<const uint8_t*>(io.raw_input(0)),
                   io.raw_input(1), io.raw_input(2), io.raw_output(0),
                   dtype_size(ctx.input(1)->dtype()), *index, cuda.stream()),
      what.c_str());
}

Status run_trilu(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& x = *ctx.input(0);
  if (x.rank() < 2) {
    return ctx.error("input must have rank >= 2, got {}",
                     dims_to_string(x.dims()));
  }
  int64_t k = 0;
  if (ctx.input(1) != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(k, read_int_scalar(ctx, *ctx.input(1), "k"));
  }
  const int64_t rows = x.dim(x.rank() - 2);
  const int64_t cols = x.dim(x.rank() - 1);
  const int64_t matrices =
      rows * cols == 0 ? 0 : x.num_elements() / (rows * cols);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(launch_trilu(io.raw_input(0), io.raw_output(0),
                                dtype_size(x.dtype()), matrices, rows, cols, k,
                                ctx.attr_int("upper") != 0, cuda.stream()),
                   what.c_str());
}

}  // namespace

void add_data_movement_kernels(std::vector<CudaKernel>& kernels) {
  for (const char* op :
       {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"}) {
    kernels.push_back({kOnnxDomain, op, any_dtype, run_reshaping});
  }
  kernels.push_back({kOnnxDomain, "Transpose", any_dtype, run_transpose});
  kernels.push_back({kOnnxDomain, "Expand", any_dtype, run_expand});
  kernels.push_back({kOnnxDomain, "Slice", any_dtype, run_slice});
  kernels.push_back({kOnnxDomain, "Concat", any_dtype, run_concat});
  kernels.push_back({kOnnxDomain, "Split", any_dtype, run_split});
  kernels.push_back({kOnnxDomain, "Gather", any_dtype, run_gather});
  kernels.push_back({kOnnxDomain, "Where", any_dtype, run_where});
  kernels.push_back({kOnnxDomain, "Trilu", any_dtype, run_trilu});
}

}  // namespace seqrt::cuda
