#include "importers/onnx/tensor_convert.h"

#include <cstring>
#include <iterator>

#include "importers/onnx/external_data.h"

namespace seqrt {
namespace {

using onnx::TensorProto;

// Codes newer than the ONNX 1.12 schema we build against.
constexpr int32_t kOnnxFloat8E4M3FN = 17;
constexpr int32_t kOnnxFloat8E4M3FNUZ = 18;
constexpr int32_t kOnnxFloat8E5M2 = 19;
constexpr int32_t kOnnxFloat8E5M2FNUZ = 20;
constexpr int32_t kOnnxUint4 = 21;
constexpr int32_t kOnnxInt4 = 22;
constexpr int32_t kOnnxFloat4E2M1 = 23;
constexpr int32_t kOnnxFloat8E8M0 = 24;

// int4/uint4/float4e2m1 in int32_data: ONNX writes one packed byte (two
// elements) an entry; some writers put one element an entry. The count tells
// them apart (they agree for a single element: its low nibble either way).
Status copy_packed_int4(const TensorProto& proto, Tensor& tensor,
                        const std::string& what) {
  const auto& field = proto.int32_data();
  const int64_t count = tensor.num_elements();
  const int64_t packed = (count + 1) / 2;
  auto* data = static_cast<uint8_t*>(tensor.mutable_data());
  if (field.size() == packed) {
    for (int i = 0; i < field.size(); ++i) {
      data[i] = static_cast<uint8_t>(field.Get(i));
    }
    if (count % 2 == 1) data[packed - 1] &= 0x0f;
    return Status::ok();
  }
  if (field.size() == count) {
    for (int i = 0; i < field.size(); ++i) {
      pack_int4(data, i, static_cast<int8_t>(field.Get(i)));
    }
    return Status::ok();
  }
  return invalid_model(
      "{}: int32_data holds {} values but {} {} needs {} (two 4-bit values "
      "an entry) or {} (one an entry)",
      what, field.size(), dtype_name(tensor.dtype()),
      dims_to_string(tensor.dims()), packed, count);
}

// Copies a typed repeated field into the tensor, element by element, after
// checking its length.
template <typename Field, typename Store>
Status copy_field(const Field& field, Tensor& tensor, const std::string& what,
                  const char* field_name, Store store) {
  if (static_cast<int64_t>(field.size()) != tensor.num_elements()) {
    return invalid_model("{}: {} holds {} values but its dims {} need {}", what,
                         field_name, field.size(),
                         dims_to_string(tensor.dims()), tensor.num_elements());
  }
  for (int i = 0; i < field.size(); ++i) store(i, field.Get(i));
  return Status::ok();
}

Status copy_typed_fields(const TensorProto& proto, Tensor& tensor,
                         const std::string& what) {
  void* data = tensor.mutable_data();
  switch (tensor.dtype()) {
    case DType::kF32:
      return copy_field(
          proto.float_data(), tensor, what, "float_data",
          [&](int i, float v) { static_cast<float*>(data)[i] = v; });
    case DType::kF64:
      return copy_field(
          proto.double_data(), tensor, what, "double_data",
          [&](int i, double v) { static_cast<double*>(data)[i] = v; });
    case DType::kI64:
      return copy_field(
          proto.int64_data(), tensor, what, "int64_data",
          [&](int i, int64_t v) { static_cast<int64_t*>(data)[i] = v; });
    case DType::kI32:
      return copy_field(
          proto.int32_data(), tensor, what, "int32_data",
          [&](int i, int32_t v) { static_cast<int32_t*>(data)[i] = v; });
    case DType::kF16:
    case DType::kBF16:
      // 16-bit floats are stored as their bit patterns in int32_data.
      return copy_field(proto.int32_data(), tensor, what, "int32_data",
                        [&](int i, int32_t v) {
                          static_cast<uint16_t*>(data)[i] =
                              static_cast<uint16_t>(v);
                        });
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return copy_field(
          proto.int32_data(), tensor, what, "int32_data",
          [&](int i, int32_t v) { tensor.set_element_i64(i, int64_t{v}); });
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
      // float8 values are stored as their bit patterns in int32_data.
      return copy_field(proto.int32_data(), tensor, what, "int32_data",
                        [&](int i, int32_t v) {
                          static_cast<uint8_t*>(data)[i] =
                              static_cast<uint8_t>(v);
                        });
    case DType::kI4:
    case DType::kU4:
    case DType::kF4E2M1:
      return copy_packed_int4(proto, tensor, what);
    case DType::kUndefined:
      break;
  }
  return internal_error("{}: no typed field for dtype", what);
}

Result<std::vector<int64_t>> proto_dims(const TensorProto& proto,
                                        const std::string& what) {
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  Result<int64_t> count = checked_num_elements(dims);
  if (!count.is_ok()) {
    return invalid_model("{}: bad dims {}: {}", what, dims_to_string(dims),
                         count.status().message());
  }
  return dims;
}

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kBool;
    case kOnnxInt4:
      return DType::kI4;
    case kOnnxUint4:
      return DType::kU4;
    case kOnnxFloat8E4M3FN:
      return DType::kF8E4M3FN;
    case kOnnxFloat8E4M3FNUZ:
      return DType::kF8E4M3FNUZ;
    case kOnnxFloat8E5M2:
      return DType::kF8E5M2;
    case kOnnxFloat8E5M2FNUZ:
      return DType::kF8E5M2FNUZ;
    case kOnnxFloat4E2M1:
      return DType::kF4E2M1;
    case kOnnxFloat8E8M0:
      return DType::kF8E8M0;
    default:
      return std::nullopt;
  }
}

int32_t onnx_from_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kBool:
      return TensorProto::BOOL;
    case DType::kI4:
      return kOnnxInt4;
    case DType::kU4:
      return kOnnxUint4;
    case DType::kF8E4M3FN:
      return kOnnxFloat8E4M3FN;
    case DType::kF8E4M3FNUZ:
      return kOnnxFloat8E4M3FNUZ;
    case DType::kF8E5M2:
      return kOnnxFloat8E5M2;
    case DType::kF8E5M2FNUZ:
      return kOnnxFloat8E5M2FNUZ;
    case DType::kF4E2M1:
      return kOnnxFloat4E2M1;
    case DType::kF8E8M0:
      return kOnnxFloat8E8M0;
    case DType::kUndefined:
      break;
  }
  return TensorProto::UNDEFINED;
}

std::string onnx_type_name(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(elem_type));
  }
  // Types newer than the ONNX 1.12 schema we build against.
  static const char* const kNewer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0"};
  constexpr int32_t kFirstNewer = kOnnxFloat8E4M3FN;
  int32_t index = elem_type - kFirstNewer;
  if (index >= 0 && index < static_cast<int32_t>(std::size(kNewer))) {
    return kNewer[index];
  }
  return fmt::format("type #{}", elem_type);
}

Result<Tensor> tensor_from_proto(const TensorProto& proto,
                                 const std::string& model_dir,
                                 const std::string& what) {
  std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    return unsupported(
        "{}: element type {} is not supported (expected float, float16, "
        "bfloat16, double, int8, uint8, int32, int64, bool, int4, uint4, "
        "float4e2m1 or a float8 type)",
        what, onnx_type_name(proto.data_type()));
  }
  if (proto.has_segment()) {
    return unsupported("{}: segmented tensors are not supported", what);
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, proto_dims(proto, what));
  Result<Tensor> allocated = Tensor::allocate(*dtype, dims);
  if (!allocated.is_ok()) {
    return allocated.status().with_context(what);
  }
  Tensor tensor = std::move(allocated).value();
  if (proto.data_location() == TensorProto::EXTERNAL) {
    Status read = read_external_data(proto, model_dir, tensor.byte_size(),
                                     tensor.mutable_data());
    if (!read.is_ok()) return read;
    return tensor;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != tensor.byte_size()) {
      return invalid_model("{}: raw_data holds {} bytes but {} {} needs {}",
                           what, raw.size(), dtype_name(*dtype),
                           dims_to_string(dims), tensor.byte_size());
    }
    // Our hosts are little-endian, as ONNX's raw_data is.
    if (!raw.empty())
      std::memcpy(tensor.mutable_data(), raw.data(), raw.size());
    return tensor;
  }
  SEQRT_RETURN_IF_ERROR(copy_typed_fields(proto, tensor, what));
  return tensor;
}

void tensor_to_proto(const Tensor& tensor, const std::string& name,
                     TensorProto& proto) {
  proto.Clear();
  proto.set_name(name);
  proto.set_data_type(onnx_from_dtype(tensor.dtype()));
  for (int64_t dim : tensor.dims()) proto.add_dims(dim);
  proto.set_raw_data(static_cast<const char*>(tensor.data()),
                     tensor.byte_size());
}

}  // namespace seqrt
