#include "graph/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace seqrt {

Result<RegularFile> RegularFile::open(const std::string& path) {
  // O_NONBLOCK: a FIFO without a writer opens at once instead of waiting.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int error = errno;
    return Status(
        error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
        fmt::format("cannot open '{}': {}", path, std::strerror(error)));
  }
  RegularFile file(fd, 0);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return io_error("cannot stat '{}': {}", path, std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return io_error(
        "'{}' is not a regular file (a FIFO, device or directory is not "
        "read)",
        path);
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return io_error("cannot read '{}': {}", path, std::strerror(errno));
  }
  file.size_ = static_cast<uint64_t>(info.st_size);
  return file;
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::FILE* RegularFile::release_to_stream() {
  std::FILE* stream = ::fdopen(fd_, "rb");
  if (stream != nullptr) fd_ = -1;
  return stream;
}

}  // namespace seqrt
