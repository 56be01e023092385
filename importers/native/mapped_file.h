// A file mapped read-only into memory; unmapped when the last shared_ptr
// to it goes away. Tensor views into the mapping hold such a pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/status.h"

namespace seqrt {

class MappedFile {
 public:
  // Maps the whole regular file at `path`. An empty file gives size() 0
  // and data() nullptr.
  static Result<std::shared_ptr<const MappedFile>> open(
      const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Page-aligned start of the mapping.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  const uint8_t* data_;
  size_t size_;
};

}  // namespace seqrt
