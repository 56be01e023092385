#include "importers/onnx/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "graph/regular_file.h"

namespace seqrt {
namespace {

struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

Result<uint64_t> parse_u64(const std::string& text, const std::string& key,
                           const std::string& tensor) {
  if (text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return invalid_model(
        "initializer '{}': external data '{}' is '{}', expected a "
        "non-negative integer",
        tensor, key, text);
  }
  return static_cast<uint64_t>(std::strtoull(text.c_str(), nullptr, 10));
}

Result<ExternalRef> parse_ref(const onnx::TensorProto& tensor) {
  ExternalRef ref;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      ref.location = entry.value();
    } else if (entry.key() == "offset") {
      SEQRT_ASSIGN_OR_RETURN(ref.offset,
                             parse_u64(entry.value(), "offset", tensor.name()));
    } else if (entry.key() == "length") {
      SEQRT_ASSIGN_OR_RETURN(ref.length,
                             parse_u64(entry.value(), "length", tensor.name()));
    }
  }
  if (ref.location.empty()) {
    return invalid_model("initializer '{}': external data has no 'location'",
                         tensor.name());
  }
  return ref;
}

// Relative, without `..` components: the path names a file in the folder.
Status check_relative(const std::string& location, const std::string& tensor) {
  if (location.front() == '/') {
    return invalid_model(
        "initializer '{}': external data path '{}' is absolute; only paths "
        "relative to the model's folder are allowed",
        tensor, location);
  }
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2) {
      return invalid_model(
          "initializer '{}': external data path '{}' contains '..'; only "
          "files inside the model's folder are allowed",
          tensor, location);
    }
    start = end + 1;
  }
  return Status::ok();
}

// Resolves symlinks on both sides so a link pointing outside is refused.
Result<std::string> resolve_inside(const std::string& model_dir,
                                   const std::string& location,
                                   const std::string& tensor) {
  char dir_buffer[PATH_MAX];
  char file_buffer[PATH_MAX];
  std::string joined = model_dir + "/" + location;
  if (realpath(model_dir.c_str(), dir_buffer) == nullptr) {
    return io_error("initializer '{}': cannot resolve the model folder '{}'",
                    tensor, model_dir);
  }
  if (realpath(joined.c_str(), file_buffer) == nullptr) {
    int error = errno;
    return Status(
        error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
        fmt::format("initializer '{}': cannot open external data '{}': {}",
                    tensor, joined, std::strerror(error)));
  }
  std::string dir = dir_buffer;
  std::string file = file_buffer;
  if (dir != "/") dir += "/";
  if (file.compare(0, dir.size(), dir) != 0) {
    return invalid_model(
        "initializer '{}': external data '{}' resolves to '{}', outside the "
        "model's folder",
        tensor, location, file);
  }
  return file;
}

Status read_exact(int fd, uint64_t offset, size_t count, void* out,
                  const std::string& path) {
  auto* bytes = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < count) {
    ssize_t got = pread(fd, bytes + done, count - done,
                        static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return io_error("cannot read '{}'", path);
    done += static_cast<size_t>(got);
  }
  return Status::ok();
}

}  // namespace

Status read_external_data(const onnx::TensorProto& tensor,
                          const std::string& model_dir, size_t byte_count,
                          void* out) {
  const std::string& name = tensor.name();
  if (model_dir.empty()) {
    return invalid_model(
        "initializer '{}' uses external data, which needs the model's "
        "folder; load the model from a file",
        name);
  }
  SEQRT_ASSIGN_OR_RETURN(ExternalRef ref, parse_ref(tensor));
  SEQRT_RETURN_IF_ERROR(check_relative(ref.location, name));
  SEQRT_ASSIGN_OR_RETURN(std::string path,
                         resolve_inside(model_dir, ref.location, name));
  if (ref.length && *ref.length != byte_count) {
    return invalid_model(
        "initializer '{}': external data length is {} bytes but its type "
        "needs {}",
        name, *ref.length, byte_count);
  }
  Result<RegularFile> file = RegularFile::open(path);
  if (!file.is_ok()) {
    return invalid_model("initializer '{}': {}", name,
                         file.status().message());
  }
  if (ref.offset > file->size() || file->size() - ref.offset < byte_count) {
    return invalid_model(
        "initializer '{}': external data '{}' is {} bytes, too short for {} "
        "bytes at offset {}",
        name, path, file->size(), byte_count, ref.offset);
  }
  return read_exact(file->fd(), ref.offset, byte_count, out, path);
}

}  // namespace seqrt
