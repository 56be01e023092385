// seqrt::QuantizedGather: rows of a weight-only quantized table, dequantised
// — an embedding lookup that reads 4- or 8-bit codes instead of f32 rows.
//   W (N, ceil(K·bits/8)) u8, W_scale (N, n_blocks) f32, W_zero_point
//   (N, n_blocks) u8: the layout of quantized seqrt::Linear
//   (quantized_linear.h), row n being entry n of the table;
//   indices: i32/i64 of any shape, negative ones count from the end;
//   Y (indices..., K) = (code(idx, k) − zp) · scale, in `output_dtype`
//   (an ONNX type code: 1 f32, the default; 10 f16; 16 bf16 — a table
//   imported with f16 scales gives f16 rows, as the importer's op did).
// What the GatherBlockQuantized importer, the DequantizeLinear→Gather fold
// and `seqrt quantize --embedding` write. The CPU backend runs the
// reference kernel: a lookup dequantises a few rows, no arithmetic to speak
// of, and each value is one exact product in either precision.
#include "ops/linalg/quantized_gather.h"

#include "ops/linalg/quantized_linear.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

bool is_index_dtype(DType dtype) {
  return dtype == DType::kI32 || dtype == DType::kI64;
}

Result<DType> output_dtype(const OpContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(
      DType dtype,
      dtype_from_onnx_code(ctx, "output_dtype", ctx.attr_int("output_dtype")));
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return ctx.error("output_dtype must be f32, f16 or bf16, got {}",
                     dtype_name(dtype));
  }
  return dtype;
}

Status infer_quantized_gather(InferContext& ctx) {
  LinearOperand in[kQuantizedGatherInputCount];
  for (size_t i = 0; i < kQuantizedGatherInputCount; ++i) {
    in[i].present = ctx.has_input(i);
    if (!in[i].present) continue;
    in[i].dtype = ctx.input_dtype(i);
    const std::optional<Shape>& shape = ctx.input_shape(i);
    in[i].shape = shape ? &*shape : nullptr;
  }
  SEQRT_ASSIGN_OR_RETURN(
      QuantizedLinearDims q,
      check_quantized_weight(ctx, in[kQuantizedGatherW],
                             in[kQuantizedGatherWScale],
                             in[kQuantizedGatherWZeroPoint]));
  if (!is_index_dtype(in[kQuantizedGatherIndices].dtype)) {
    return ctx.error("indices must be i32 or i64, got {}",
                     dtype_name(in[kQuantizedGatherIndices].dtype));
  }
  SEQRT_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx));
  const std::optional<Shape>& indices =
      ctx.input_shape(kQuantizedGatherIndices);
  if (!indices) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  Shape y = *indices;
  y.dims().push_back(Dim(q.k));
  ctx.set_output(0, dtype, std::move(y));
  return Status::ok();
}

}  // namespace

Status run_quantized_gather(KernelContext& ctx) {
  LinearOperand in[kQuantizedGatherInputCount];
  Shape shapes[kQuantizedGatherInputCount];
  for (size_t i = 0; i < kQuantizedGatherInputCount; ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) continue;
    shapes[i] = t->shape();
    in[i] = {true, t->dtype(), &shapes[i]};
  }
  SEQRT_ASSIGN_OR_RETURN(
      QuantizedLinearDims q,
      check_quantized_weight(ctx, in[kQuantizedGatherW],
                             in[kQuantizedGatherWScale],
                             in[kQuantizedGatherWZeroPoint]));
  const Tensor& indices = *ctx.input(kQuantizedGatherIndices);
  if (!is_index_dtype(indices.dtype())) {
    return ctx.error("indices must be i32 or i64, got {}",
                     dtype_name(indices.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx));
  std::vector<int64_t> y_dims = indices.dims();
  y_dims.push_back(q.k);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, y_dims));
  const uint8_t* codes = ctx.input(kQuantizedGatherW)->data_as<uint8_t>();
  const float* scales = ctx.input(kQuantizedGatherWScale)->data_as<float>();
  const Tensor* zp_tensor = ctx.input(kQuantizedGatherWZeroPoint);
  const uint8_t* zps = zp_tensor ? zp_tensor->data_as<uint8_t>() : nullptr;
  // f32 rows (the common case) are written directly: this loop is the CPU
  // backend's kernel too, and a prefill looks up thousands of rows.
  float* out = dtype == DType::kF32 ? y->mutable_data_as<float>() : nullptr;
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t row = indices.element_i64(i);
    if (row < -q.n || row >= q.n) {
      return ctx.error(
          "index {} (element {} of indices) is outside the "
          "table's {} rows",
          row, i, q.n);
    }
    if (row < 0) row += q.n;
    const uint8_t* code_row = codes + row * q.row_bytes;
    for (int64_t k = 0; k < q.k; ++k) {
      const int64_t block = row * q.n_blocks + k / q.block_size;
      const int zero = zps ? zps[block] : default_zero_point(q.bits);
      const float value =
          static_cast<float>(quantized_code(code_row, k, q.bits) - zero) *
          scales[block];
      if (out != nullptr) {
        out[i * q.k + k] = value;
      } else {
        y->set_element_f64(i * q.k + k, value);
      }
    }
  }
  return Status::ok();
}

void register_quantized_gather(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "QuantizedGather";
  s.doc =
      "rows of a weight-only quantized table (4- or 8-bit codes in blocks "
      "along K), dequantised: an embedding lookup "
      "(ops/linalg/quantized_gather.h)";
  s.inputs = {{"W"}, {"indices"}, {"W_scale"}, {"W_zero_point", true}};
  s.outputs = {{"Y"}};
  s.attrs = {AttrSpec{"bits", AttrType::kInt, Attribute(int64_t{4})},
             AttrSpec{"block_size", AttrType::kInt, Attribute(int64_t{32})},
             AttrSpec{"K", AttrType::kInt, Attribute(int64_t{0})},
             AttrSpec{"output_dtype", AttrType::kInt, Attribute(int64_t{1})}};
  s.infer = infer_quantized_gather;
  s.reference = run_quantized_gather;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
