// The CUDA kernel table's shape ops: Tile (a strided copy), Pad (every
// mode), GatherElements, Range, ConstantOfShape (a broadcast copy of its
// value) and Shape. Output shapes and input checks come from each op's own
// shape inference; pads, repeats, axes and indices are read and checked on
// the host before any upload, with errors naming the node.
#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/copy.h"
#include "backends/cuda/kernels/shape_ops.h"
#include "backends/cuda/node_io.h"
#include "backends/cuda/shape_plan.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cuda {
namespace {

// Copies `bytes` of host memory into the scratch block (pageable memory:
// the call returns once it has been staged).
Status upload_scratch(const NodeIo& io, CudaContext& cuda, const void* data,
                      size_t bytes, const std::string& what) {
  if (bytes == 0) return Status::ok();
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(io.scratch(), data, bytes, cudaMemcpyHostToDevice,
                      cuda.stream()),
      what);
  return Status::ok();
}

int64_t scratch_floats(size_t bytes) {
  return static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
}

Status run_tile(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> repeats,
                         read_int_list(ctx, *ctx.input(1), "repeats"));
  Result<StridedCopy> copy = tile_copy(ctx.input(0)->dims(), repeats);
  if (!copy.is_ok()) return plan_error(ctx, copy.status());
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(launch_strided_copy(io.raw_input(0), io.raw_output(0),
                                       dtype_size(ctx.input(0)->dtype()), *copy,
                                       cuda.stream()),
                   what.c_str());
}

Status run_pad(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& data = *ctx.input(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                         read_int_list(ctx, *ctx.input(1), "pads"));
  std::vector<int64_t> axes;
  if (ctx.input(3) != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> given,
                           read_int_list(ctx, *ctx.input(3), "axes"));
    SEQRT_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, given, rank));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) {
    return ctx.error("pads {} must have 2 * {} entries (begins, then ends)",
                     dims_to_string(pads), axes.size());
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = pads[i];
  Result<PadMode> mode = pad_mode(ctx.attr_string("mode"));
  if (!mode.is_ok()) return plan_error(ctx, mode.status());
  Result<PadIndex> index = pad_index(data.dims(), out.dims[0], begin, *mode);
  if (!index.is_ok()) return plan_error(ctx, index.status());
  const Tensor* fill = ctx.input(2);
  if (fill != nullptr &&
      (fill->dtype() != data.dtype() || fill->num_elements() != 1)) {
    return ctx.error("constant_value must be one {} value, got {}{}",
                     dtype_name(data.dtype()), dtype_name(fill->dtype()),
                     dims_to_string(fill->dims()));
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(
      launch_pad(io.raw_input(0), fill != nullptr ? io.raw_input(2) : nullptr,
                 io.raw_output(0), dtype_size(data.dtype()), *index,
                 element_count(out.dims[0]), cuda.stream()),
      what.c_str());
}

Status run_gather_elements(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) {
    return ctx.error("indices must be int32 or int64, got {}",
                     dtype_name(indices.dtype()));
  }
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  std::vector<int64_t> index(static_cast<size_t>(indices.num_elements()));
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    index[i] = indices.element_i64(i);
  }
  Result<GatherElementsIndex> plan =
      gather_elements_index(data.dims(), indices.dims(), axis, index);
  if (!plan.is_ok()) return plan_error(ctx, plan.status());
  const size_t index_bytes = index.size() * sizeof(int64_t);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(
      io.begin(out.dims, scratch_floats(index_bytes), out.dtypes));
  const std::string what = ctx.node().label();
  // The checked, non-negative indices as int64 in the scratch block.
  SEQRT_RETURN_IF_ERROR(
      upload_scratch(io, cuda, index.data(), index_bytes, what));
  return io.finish(
      launch_gather_elements(io.raw_input(0),
                             reinterpret_cast<const int64_t*>(io.scratch()),
                             io.raw_output(0), dtype_size(data.dtype()), *plan,
                             static_cast<int64_t>(index.size()), cuda.stream()),
      what.c_str());
}

Status range_dtypes(const Graph& graph, const Node& node) {
  const DType dtype = graph.value(node.inputs[0]).dtype;
  if (dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kI32 ||
      dtype == DType::kI64) {
    return Status::ok();
  }
  return unsupported(
      "{}: the cuda backend computes Range in f32, f64, int32 "
      "and int64, not {}",
      node.label(), dtype_name(dtype));
}

// The length comes from the op's shape inference (which reads the
// values); the elements are computed on the device.
Status run_range(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& start = *ctx.input(0);
  const Tensor& delta = *ctx.input(2);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  const bool integer =
      out.dtypes[0] == DType::kI32 || out.dtypes[0] == DType::kI64;
  return io.finish(
      launch_range(out.dtypes[0], integer ? 0.0 : start.element_f64(0),
                   integer ? 0.0 : delta.element_f64(0),
                   integer ? start.element_i64(0) : 0,
                   integer ? delta.element_i64(0) : 0, io.raw_output(0),
                   element_count(out.dims[0]), cuda.stream()),
      what.c_str());
}

// Fills the output on the device from one value in the scratch block (a
// broadcast copy with every source stride 0).
Status run_constant_of_shape(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Attribute* attr = ctx.node().attr("value");
  Tensor value = attr != nullptr ? attr->as_tensor() : Tensor::scalar(0.0f);
  if (value.num_elements() != 1 || value.dtype() != out.dtypes[0]) {
    return ctx.error("value must be one {} element, got {}{}",
                     dtype_name(out.dtypes[0]), dtype_name(value.dtype()),
                     dims_to_string(value.dims()));
  }
  Result<StridedCopy> copy = broadcast_copy({}, out.dims[0]);
  if (!copy.is_ok()) return plan_error(ctx, copy.status());
  const size_t bytes = dtype_size(value.dtype());
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, scratch_floats(bytes), out.dtypes));
  const std::string what = ctx.node().label();
  SEQRT_RETURN_IF_ERROR(upload_scratch(io, cuda, value.data(), bytes, what));
  return io.finish(launch_strided_copy(io.scratch(), io.raw_output(0), bytes,
                                       *copy, cuda.stream()),
                   what.c_str());
}

// Shape's values are its input's dims, which the host holds: no device
// work, only the [start, end) slice ONNX defines (clamped into [0, rank]).
Status run_shape(KernelContext& ctx, CudaContext&) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& dims = ctx.input(0)->dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t axis) {
    if (axis < 0) axis += rank;
    return axis < 0 ? 0 : axis > rank ? rank : axis;
  };
  const Attribute* start_attr = ctx.node().attr("start");
  const Attribute* end_attr = ctx.node().attr("end");
  const int64_t start = clamp(start_attr ? start_attr->as_int() : 0);
  const int64_t end = clamp(end_attr ? end_attr->as_int() : rank);
  std::vector<int64_t> values;
  for (int64_t a = start; a < end; ++a) values.push_back(dims[a]);
  if (out.dims[0] != std::vector<int64_t>{int64_t(values.size())}) {
    return make_error(StatusCode::kInternal,
                      "{}: cuda Shape gives {} values, shape inference {}",
                      ctx.node().label(), values.size(),
                      dims_to_string(out.dims[0]));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, out.dtypes[0], out.dims[0]));
  for (size_t i = 0; i < values.size(); ++i) {
    y->set_element_i64(static_cast<int64_t>(i), values[i]);
  }
  return Status::ok();
}

}  // namespace

void add_shape_kernels(std::vector<CudaKernel>& kernels) {
  kernels.push_back({kOnnxDomain, "Tile", any_dtype, run_tile});
  kernels.push_back({kOnnxDomain, "Pad", any_dtype, run_pad});
  kernels.push_back(
      {kOnnxDomain, "GatherElements", any_dtype, run_gather_elements});
  kernels.push_back({kOnnxDomain, "Range", range_dtypes, run_range});
  kernels.push_back(
      {kOnnxDomain, "ConstantOfShape", any_dtype, run_constant_of_shape});
  kernels.push_back({kOnnxDomain, "Shape", any_dtype, run_shape});
}

}  // namespace seqrt::cuda
