#include "tools/input_files.h"

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "importers/onnx/tensor_proto.h"
#include "importers/tensor/npy.h"

namespace seqrt {

Result<Tensor> read_input_file(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".npy") return read_npy_file(path);
  if (extension == ".pb") return read_tensor_pb_file(path);
  return invalid_argument(
      "'{}': input files must be .npy or .pb (ONNX TensorProto)", path);
}

Result<std::map<std::string, Tensor>> read_feeds(
    const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> feeds;
  for (const std::string& spec : specs) {
    size_t equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 ||
        equals + 1 == spec.size()) {
      return invalid_argument("--input '{}' must have the form NAME=PATH",
                              spec);
    }
    std::string name = spec.substr(0, equals);
    if (feeds.count(name) != 0) {
      return invalid_argument("--input '{}' is given twice", name);
    }
    Result<Tensor> tensor = read_input_file(spec.substr(equals + 1));
    if (!tensor.is_ok()) {
      return tensor.status().with_context(fmt::format("input '{}'", name));
    }
    feeds.emplace(name, std::move(tensor).value());
  }
  return feeds;
}

Result<std::map<std::string, int64_t>> parse_bindings(
    const std::vector<std::string>& bindings) {
  std::map<std::string, int64_t> parsed;
  for (const std::string& binding : bindings) {
    const size_t equals = binding.find('=');
    int64_t size = -1;
    const char* end = binding.data() + binding.size();
    bool ok = equals != std::string::npos && equals > 0;
    if (ok) {
      auto [ptr, error] =
          std::from_chars(binding.data() + equals + 1, end, size);
      ok = error == std::errc() && ptr == end && size >= 0;
    }
    if (!ok) {
      return invalid_argument(
          "--bind '{}': expected NAME=SIZE with a size >= 0, e.g. seq=128",
          binding);
    }
    parsed[binding.substr(0, equals)] = size;
  }
  return parsed;
}

}  // namespace seqrt
