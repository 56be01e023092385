#include "tools/generate/bounded_read.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace seqrt {

Result<std::string> read_bounded(RegularFile file, const std::string& path,
                                 uint64_t max_bytes) {
  std::FILE* stream = file.release_to_stream();
  if (stream == nullptr) {
    return io_error("cannot read file '{}': {}", path, std::strerror(errno));
  }
  std::string text;
  char chunk[1 << 16];
  size_t got = 0;
  while (text.size() <= max_bytes &&
         (got = std::fread(chunk, 1, sizeof(chunk), stream)) > 0) {
    text.append(chunk, got);
  }
  const bool failed = std::ferror(stream) != 0;
  std::fclose(stream);
  if (failed) return io_error("cannot read file '{}'", path);
  return text;
}

}  // namespace seqrt
