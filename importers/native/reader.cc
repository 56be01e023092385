#include "importers/native/reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "graph/regular_file.h"

#include "importers/native/deserialize.h"
#include "importers/native/format.h"
#include "importers/native/mapped_file.h"
#include "importers/native/read_options.h"
#include "importers/native/validate.h"

namespace seqrt {
namespace {

// All checks, in order; errors name no file (the caller adds it).
Result<Graph> read_validated(const std::shared_ptr<const void>& owner,
                             const uint8_t* data, size_t size,
                             const OpRegistry* registry) {
  SEQRT_ASSIGN_OR_RETURN(SeqrtHeader header, validate_header(data, size));
  const uint8_t* flatbuffer = data + header.flatbuffer_offset;
  auto flatbuffer_size = static_cast<size_t>(header.flatbuffer_size);
  SEQRT_RETURN_IF_ERROR(verify_flatbuffer(flatbuffer, flatbuffer_size));
  const fb::Model* model = fb::GetModel(flatbuffer);
  SEQRT_ASSIGN_OR_RETURN(
      SegmentTable segments,
      SegmentTable::create(model->segments(), data + header.segments_offset,
                           header.segments_size));
  SEQRT_ASSIGN_OR_RETURN(
      Graph graph,
      graph_from_flatbuffer(*model, flatbuffer_size, segments, owner));
  SEQRT_RETURN_IF_ERROR(validate_graph(graph, registry));
  return graph;
}

// A 64-byte aligned copy of `size` bytes, or nullptr when out of memory.
std::shared_ptr<const uint8_t> aligned_copy(const uint8_t* data, size_t size) {
  size_t rounded = align_to_segment(size);
  void* copy = std::aligned_alloc(kSeqrtSegmentAlignment, rounded);
  if (copy == nullptr) return nullptr;
  std::memcpy(copy, data, size);
  return std::shared_ptr<const uint8_t>(
      static_cast<const uint8_t*>(copy),
      [](const uint8_t* p) { std::free(const_cast<uint8_t*>(p)); });
}

// The whole file in 64-byte aligned memory, read with read(2): nothing of
// it stays mapped. A file that shrinks while being read gives the bytes
// there were; validation then names what is missing.
Result<std::shared_ptr<const uint8_t>> read_file_copy(const std::string& path,
                                                      size_t& size) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  if (file.size() >
      std::numeric_limits<size_t>::max() - kSeqrtSegmentAlignment) {
    return io_error("'{}' is too large to read into memory", path);
  }
  size = static_cast<size_t>(file.size());
  if (size == 0) return std::shared_ptr<const uint8_t>();
  uint8_t* bytes = static_cast<uint8_t*>(
      std::aligned_alloc(kSeqrtSegmentAlignment, align_to_segment(size)));
  if (bytes == nullptr) {
    return make_error(StatusCode::kOutOfMemory,
                      "'{}': cannot allocate {} bytes to read the model", path,
                      size);
  }
  std::shared_ptr<const uint8_t> owner(
      bytes, [](const uint8_t* p) { std::free(const_cast<uint8_t*>(p)); });
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::read(file.fd(), bytes + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return io_error("cannot read '{}': {}", path, std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  size = done;
  return owner;
}

}  // namespace

Result<Graph> read_seqrt_buffer(std::shared_ptr<const void> owner,
                                const uint8_t* data, size_t size,
                                const SeqrtReadOptions& options) {
  std::string context = "'" + options.source_name + "'";
  if (data == nullptr && size != 0) {
    return invalid_argument("{}: no data but a size of {} bytes", context,
                            size);
  }
  if (size > 0 &&
      reinterpret_cast<uintptr_t>(data) % kSeqrtSegmentAlignment != 0) {
    std::shared_ptr<const uint8_t> copy = aligned_copy(data, size);
    if (copy == nullptr) {
      return make_error(StatusCode::kOutOfMemory,
                        "{}: cannot allocate {} bytes to align the model",
                        context, size);
    }
    data = copy.get();
    owner = std::move(copy);
  }
  Result<Graph> graph = read_validated(owner, data, size, options.registry);
  if (!graph.is_ok()) return graph.status().with_context(context);
  return graph;
}

Result<Graph> read_seqrt_file(const std::string& path,
                              const SeqrtReadOptions& options) {
  SeqrtReadOptions file_options = options;
  file_options.source_name = path;
  if (options.access == FileAccess::kCopy) {
    size_t size = 0;
    SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<const uint8_t> copy,
                           read_file_copy(path, size));
    const uint8_t* data = copy.get();
    return read_seqrt_buffer(std::move(copy), data, size, file_options);
  }
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                         MappedFile::open(path));
  const uint8_t* data = file->data();
  size_t size = file->size();
  return read_seqrt_buffer(std::move(file), data, size, file_options);
}

Result<Graph> read_seqrt_file(const std::string& path) {
  return read_seqrt_file(path, SeqrtReadOptions());
}

Result<Graph> read_seqrt_file(const std::string& path, FileAccess access) {
  SeqrtReadOptions options;
  options.access = access;
  return read_seqrt_file(path, options);
}

Result<Graph> read_seqrt_buffer(std::shared_ptr<const void> owner,
                                const uint8_t* data, size_t size) {
  return read_seqrt_buffer(std::move(owner), data, size, SeqrtReadOptions());
}

bool looks_like_seqrt(const uint8_t* data, size_t size) {
  return data != nullptr && size >= sizeof(kSeqrtMagic) &&
         std::memcmp(data, kSeqrtMagic, sizeof(kSeqrtMagic)) == 0;
}

}  // namespace seqrt
