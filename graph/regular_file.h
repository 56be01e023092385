// A file opened for reading only when it is a regular file. Opening a FIFO
// blocks until a writer comes, and reading a device may never end, so the
// path is opened without blocking, checked with fstat, and only then made
// an ordinary blocking descriptor. Every loader of models, inputs and
// external data opens its files through this.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "graph/status.h"

namespace seqrt {

class RegularFile {
 public:
  // kNotFound when `path` does not exist; kIoError naming the path when it
  // is not a regular file (FIFO, device, directory, socket) or cannot be
  // opened.
  static Result<RegularFile> open(const std::string& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // A stdio stream that owns the descriptor from now on (close it with
  // fclose); null on failure.
  std::FILE* release_to_stream();

 private:
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace seqrt
