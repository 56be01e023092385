#include "importers/onnx/tensor_proto.h"

#include <cstdio>

#include "importers/onnx/proto_io.h"
#include "importers/onnx/tensor_convert.h"

namespace seqrt {

Result<Tensor> read_tensor_pb_file(const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(path));
  return read_tensor_pb_buffer(bytes.data(), bytes.size(), path);
}

Result<Tensor> read_tensor_pb_buffer(const uint8_t* data, size_t size,
                                     const std::string& name_for_errors) {
  onnx::TensorProto proto;
  SEQRT_RETURN_IF_ERROR(parse_proto(
      data, size, proto, fmt::format("tensor '{}'", name_for_errors)));
  // A standalone tensor file has no model folder to hold external data.
  return tensor_from_proto(proto, "",
                           fmt::format("tensor '{}'", name_for_errors));
}

Status write_tensor_pb_file(const Tensor& tensor, const std::string& name,
                            const std::string& path) {
  if (tensor.empty()) {
    return invalid_argument("cannot write '{}': tensor '{}' is empty", path,
                            name);
  }
  onnx::TensorProto proto;
  tensor_to_proto(tensor, name, proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return internal_error("cannot serialize tensor '{}'", name);
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return io_error("cannot create '{}'", path);
  bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  bool closed = std::fclose(file) == 0;
  if (!written || !closed) return io_error("cannot write '{}'", path);
  return Status::ok();
}

}  // namespace seqrt
