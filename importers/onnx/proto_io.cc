#include "importers/onnx/proto_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace seqrt {

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    int error = errno;
    return Status(
        error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
        fmt::format("cannot open '{}': {}", path, std::strerror(error)));
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    if (bytes.size() + got > kMaxProtoBytes) {
      std::fclose(file);
      return make_error(StatusCode::kLimitExceeded,
                        "'{}' is larger than the 2 GiB protobuf limit; store "
                        "large tensors as ONNX external data",
                        path);
    }
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return io_error("cannot read '{}'", path);
  return bytes;
}

Status parse_proto(const uint8_t* data, size_t size,
                   google::protobuf::MessageLite& message,
                   const std::string& what) {
  if (size > kMaxProtoBytes) {
    return make_error(StatusCode::kLimitExceeded,
                      "{} is {} bytes, past the 2 GiB protobuf limit", what,
                      size);
  }
  google::protobuf::io::CodedInputStream stream(data, static_cast<int>(size));
  stream.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));
  stream.SetRecursionLimit(kMaxProtoRecursion);
  if (!message.ParseFromCodedStream(&stream) ||
      !stream.ConsumedEntireMessage()) {
    return invalid_model(
        "{} is not a valid {} protobuf: the bytes are truncated or corrupt",
        what, message.GetTypeName());
  }
  return Status::ok();
}

Status parse_proto_file(const std::string& path,
                        google::protobuf::MessageLite& message,
                        const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return Status(
        error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
        fmt::format("cannot open '{}': {}", path, std::strerror(error)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return io_error("'{}' is not a regular file", path);
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxProtoBytes) {
    ::close(fd);
    return make_error(StatusCode::kLimitExceeded,
                      "'{}' is larger than the 2 GiB protobuf limit; store "
                      "large tensors as ONNX external data",
                      path);
  }
  bool parsed = false;
  int read_error = 0;
  {
    google::protobuf::io::FileInputStream file(fd);
    google::protobuf::io::CodedInputStream stream(&file);
    stream.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));
    stream.SetRecursionLimit(kMaxProtoRecursion);
    parsed =
        message.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
    read_error = file.GetErrno();
  }
  ::close(fd);
  if (read_error != 0) {
    return io_error("cannot read '{}': {}", path, std::strerror(read_error));
  }
  if (!parsed) {
    return invalid_model(
        "{} is not a valid {} protobuf: the bytes are truncated or corrupt",
        what, message.GetTypeName());
  }
  return Status::ok();
}

}  // namespace seqrt
