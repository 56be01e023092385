#include "importers/native/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graph/regular_file.h"

namespace seqrt {
namespace {

Status errno_error(const std::string& path, const char* what) {
  int code = errno;
  if (code == ENOENT) {
    return not_found("'{}': no such file", path);
  }
  return io_error("'{}': cannot {}: {}", path, what, std::strerror(code));
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(
    const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  size_t size = static_cast<size_t>(file.size());
  if (size == 0) {
    return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  }
  // The mapping stays valid after the descriptor closes.
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (data == MAP_FAILED) return errno_error(path, "map");
  return std::shared_ptr<const MappedFile>(
      new MappedFile(static_cast<const uint8_t*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
}

}  // namespace seqrt
