#include "importers/onnx/proto_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "graph/regular_file.h"
#include "importers/onnx/proto_depth.h"

namespace seqrt {
namespace {

// Why `message` did not parse from `input`'s bytes: subgraphs nested too
// deep (a ModelProto whose scan finds them), else truncated or corrupt.
Status parse_error(google::protobuf::io::ZeroCopyInputStream* input,
                   const google::protobuf::MessageLite& message,
                   const std::string& what) {
  if (input != nullptr && message.GetTypeName() == "onnx.ModelProto" &&
      onnx_subgraph_depth(*input, kMaxSubgraphDepth) > kMaxSubgraphDepth) {
    return make_error(
        StatusCode::kLimitExceeded,
        "{} nests subgraphs (If, Loop or Scan bodies) more than {} levels "
        "deep; seqrt reads at most {} (max_subgraph_depth, "
        "--max-subgraph-depth, may be at most {})",
        what, kMaxSubgraphDepth, kMaxSubgraphDepth, kMaxSubgraphDepth);
  }
  return invalid_model(
      "{} is not a valid {} protobuf: the bytes are truncated or corrupt", what,
      message.GetTypeName());
}

}  // namespace

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile regular, RegularFile::open(path));
  std::FILE* file = regular.release_to_stream();
  if (file == nullptr) return io_error("cannot read '{}'", path);
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
    google::protobuf::io::ArrayInputStream bytes(data, static_cast<int>(size));
    return parse_error(&bytes, message, what);
  }
  return Status::ok();
}

Status parse_proto_file(const std::string& path,
                        google::protobuf::MessageLite& message,
                        const std::string& what) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile regular, RegularFile::open(path));
  const int fd = regular.fd();
  if (regular.size() > kMaxProtoBytes) {
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
  if (read_error != 0) {
    return io_error("cannot read '{}': {}", path, std::strerror(read_error));
  }
  if (!parsed) {
    // Read again from the start, without holding the bytes.
    if (::lseek(fd, 0, SEEK_SET) != 0)
      return parse_error(nullptr, message, what);
    google::protobuf::io::FileInputStream file(fd);
    return parse_error(&file, message, what);
  }
  return Status::ok();
}

}  // namespace seqrt
