#include "importers/native/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "graph/verifier.h"
#include "importers/native/format.h"
#include "importers/native/reader.h"
#include "importers/native/serialize.h"

namespace seqrt {
namespace {

// Where the bytes of a file go. Regions never written read as zeros.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(uint64_t offset, const uint8_t* data, uint64_t size) = 0;
};

class BufferSink : public ByteSink {
 public:
  explicit BufferSink(std::vector<uint8_t>& out) : out_(out) {}
  Status write(uint64_t offset, const uint8_t* data, uint64_t size) override {
    if (size > 0) std::memcpy(out_.data() + offset, data, size);
    return Status::ok();
  }

 private:
  std::vector<uint8_t>& out_;
};

// Writes a file that has already been extended to its final size; chunks
// of zeros are skipped, so they stay holes (sparse files) and zero-filled
// weights cost neither disk space nor write time.
class FileSink : public ByteSink {
 public:
  FileSink(int fd, const std::string& path) : fd_(fd), path_(path) {}
  Status write(uint64_t offset, const uint8_t* data, uint64_t size) override {
    while (size > 0) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, kChunk));
      if (!all_zero(data, chunk)) {
        SEQRT_RETURN_IF_ERROR(write_fully(offset, data, chunk));
      }
      offset += chunk;
      data += chunk;
      size -= chunk;
    }
    return Status::ok();
  }

 private:
  static constexpr uint64_t kChunk = uint64_t{1} << 20;

  static bool all_zero(const uint8_t* data, size_t size) {
    return size == 0 ||
           (data[0] == 0 && std::memcmp(data, data + 1, size - 1) == 0);
  }

  Status write_fully(uint64_t offset, const uint8_t* data, size_t size) {
    while (size > 0) {
      ssize_t written = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        return io_error("'{}': cannot write: {}", path_, std::strerror(errno));
      }
      offset += static_cast<uint64_t>(written);
      data += written;
      size -= static_cast<size_t>(written);
    }
    return Status::ok();
  }

  int fd_;
  std::string path_;
};

// The header for a serialized model: the FlatBuffer right after the
// header, the segment area at the next multiple of 64.
SeqrtHeader plan_layout(const SerializedModel& model) {
  SeqrtHeader header;
  header.major = kSeqrtFormatMajor;
  header.minor = kSeqrtFormatMinor;
  header.header_size = kSeqrtHeaderSize;
  header.flatbuffer_offset = kSeqrtHeaderSize;
  header.flatbuffer_size = model.flatbuffer.size();
  header.segments_offset =
      align_to_segment(header.flatbuffer_offset + header.flatbuffer_size);
  header.segments_size = model.segments_size;
  return header;
}

uint64_t file_size(const SeqrtHeader& header) {
  return header.segments_offset + header.segments_size;
}

Status write_model(const SerializedModel& model, const SeqrtHeader& header,
                   ByteSink& sink) {
  uint8_t header_bytes[kSeqrtHeaderSize];
  encode_seqrt_header(header, header_bytes);
  SEQRT_RETURN_IF_ERROR(sink.write(0, header_bytes, sizeof(header_bytes)));
  SEQRT_RETURN_IF_ERROR(sink.write(header.flatbuffer_offset,
                                   model.flatbuffer.data(),
                                   model.flatbuffer.size()));
  for (size_t i = 0; i < model.segment_tensors.size(); ++i) {
    const Tensor& tensor = model.segment_tensors[i];
    SEQRT_RETURN_IF_ERROR(sink.write(
        header.segments_offset + model.segment_offsets[i],
        static_cast<const uint8_t*>(tensor.data()), tensor.byte_size()));
  }
  return Status::ok();
}

Result<SerializedModel> prepare(const Graph& graph) {
  SEQRT_RETURN_IF_ERROR(verify_graph(graph));
  return serialize_graph(graph);
}

Status write_file(const SerializedModel& model, const SeqrtHeader& header,
                  const std::string& temp_path) {
  int fd =
      ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return io_error("'{}': cannot create: {}", temp_path, std::strerror(errno));
  }
  Status status = Status::ok();
  if (::ftruncate(fd, static_cast<off_t>(file_size(header))) != 0) {
    status = io_error("'{}': cannot extend to {} bytes: {}", temp_path,
                      file_size(header), std::strerror(errno));
  }
  if (status.is_ok()) {
    FileSink sink(fd, temp_path);
    status = write_model(model, header, sink);
  }
  if (::close(fd) != 0 && status.is_ok()) {
    status =
        io_error("'{}': cannot close: {}", temp_path, std::strerror(errno));
  }
  return status;
}

}  // namespace

Status write_seqrt_file(const Graph& graph, const std::string& path) {
  Result<SerializedModel> model = prepare(graph);
  if (!model.is_ok()) {
    return model.status().with_context("cannot write '" + path + "'");
  }
  SeqrtHeader header = plan_layout(*model);
  std::string temp_path = path + ".tmp" + std::to_string(::getpid());
  Status status = write_file(*model, header, temp_path);
  if (status.is_ok() && std::rename(temp_path.c_str(), path.c_str()) != 0) {
    status = io_error("'{}': cannot rename '{}' to it: {}", path, temp_path,
                      std::strerror(errno));
  }
  if (!status.is_ok()) ::unlink(temp_path.c_str());
  return status;
}

Result<std::vector<uint8_t>> write_seqrt_buffer(const Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(SerializedModel model, prepare(graph));
  SeqrtHeader header = plan_layout(model);
  std::vector<uint8_t> out;
  try {
    out.resize(file_size(header));
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kOutOfMemory,
                      "graph '{}': cannot allocate {} bytes for its .seqrt "
                      "image",
                      graph.name, file_size(header));
  }
  BufferSink sink(out);
  SEQRT_RETURN_IF_ERROR(write_model(model, header, sink));
  return out;
}

}  // namespace seqrt
