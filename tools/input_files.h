// Reading a command's --input NAME=PATH tensors (.npy or ONNX TensorProto
// .pb files) and --bind NAME=SIZE symbolic dim sizes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt {

// One tensor from a .npy or .pb file, told by the extension.
Result<Tensor> read_input_file(const std::string& path);

// --input NAME=PATH, each name once.
Result<std::map<std::string, Tensor>> read_feeds(
    const std::vector<std::string>& specs);

// --bind NAME=SIZE, with SIZE >= 0.
Result<std::map<std::string, int64_t>> parse_bindings(
    const std::vector<std::string>& bindings);

}  // namespace seqrt
