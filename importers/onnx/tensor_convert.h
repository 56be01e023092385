// ONNX element types and TensorProto <-> Tensor, for every storage form:
// typed fields, raw_data (little-endian) and external data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/dtype.h"
#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt {

// Our dtype for an ONNX TensorProto::DataType; nullopt for the ones we do
// not support (string, complex, float8, int4, uint16/32/64, int16).
std::optional<DType> dtype_from_onnx(int32_t elem_type);
int32_t onnx_from_dtype(DType dtype);
// "FLOAT16", "STRING", ...: for error messages.
std::string onnx_type_name(int32_t elem_type);

// `what` names the tensor in errors ("initializer 'w'"). `model_dir` is
// where external data lives (empty refuses it).
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto,
                                 const std::string& model_dir,
                                 const std::string& what);

// raw_data form, little-endian.
void tensor_to_proto(const Tensor& tensor, const std::string& name,
                     onnx::TensorProto& proto);

}  // namespace seqrt
