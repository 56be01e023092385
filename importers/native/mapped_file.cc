#include "importers/native/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace seqrt {
namespace {

// Closes the descriptor on every path out of open(); the mapping stays
// valid after close.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

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
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno_error(path, "open");
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return errno_error(path, "stat");
  if (!S_ISREG(info.st_mode)) {
    return io_error("'{}': not a regular file", path);
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) {
    return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
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
