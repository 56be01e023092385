// libFuzzer target for the tensor files of `seqrt run --input`: the same
// bytes go through the .npy reader and the ONNX TensorProto (.pb) reader.
// A tensor either reader returns must have exactly byte_size() readable
// bytes.
#include <cstddef>
#include <cstdint>

#include "importers/onnx/tensor_proto.h"
#include "importers/tensor/npy.h"

namespace {

void touch(const seqrt::Result<seqrt::Tensor>& tensor) {
  if (!tensor.is_ok()) return;
  volatile uint8_t sink = 0;
  const auto* bytes = static_cast<const uint8_t*>(tensor->data());
  for (size_t i = 0; i < tensor->byte_size(); ++i) sink ^= bytes[i];
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  touch(seqrt::read_npy_buffer(data, size, "fuzz.npy"));
  touch(seqrt::read_tensor_pb_buffer(data, size, "fuzz.pb"));
  return 0;
}
