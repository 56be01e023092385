#include "tools/generate/prompt.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "graph/regular_file.h"

namespace seqrt {
namespace {

Status too_large(const std::string& path, uint64_t bytes, int64_t max_tokens) {
  return make_error(
      StatusCode::kLimitExceeded,
      "prompt file '{}' is {} bytes, more than {} tokens can be; raise "
      "--max-prompt-tokens (now {}, at most {}) or shorten the prompt",
      path, bytes, max_tokens, max_tokens, kMaxPromptTokensCeiling);
}

}  // namespace

Result<std::string> read_prompt_file(const std::string& path,
                                     int64_t max_tokens,
                                     int64_t max_token_bytes) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  const uint64_t max_bytes = static_cast<uint64_t>(max_tokens) *
                             static_cast<uint64_t>(max_token_bytes);
  if (file.size() > max_bytes) {
    return too_large(path, file.size(), max_tokens);
  }
  std::FILE* stream = file.release_to_stream();
  if (stream == nullptr) {
    return io_error("cannot read prompt file '{}': {}", path,
                    std::strerror(errno));
  }
  std::string text;
  char chunk[1 << 16];
  size_t got = 0;
  // Bounded even if the file grows while it is read.
  while (text.size() <= max_bytes &&
         (got = std::fread(chunk, 1, sizeof(chunk), stream)) > 0) {
    text.append(chunk, got);
  }
  bool failed = std::ferror(stream) != 0;
  std::fclose(stream);
  if (failed) return io_error("cannot read prompt file '{}'", path);
  if (text.size() > max_bytes) return too_large(path, text.size(), max_tokens);
  return text;
}

Status check_prompt_length(int64_t tokens, int64_t max_tokens) {
  if (tokens <= max_tokens) return Status::ok();
  return make_error(StatusCode::kLimitExceeded,
                    "the prompt is {} tokens, above --max-prompt-tokens ({}); "
                    "raise it (at most {}) or shorten the prompt",
                    tokens, max_tokens, kMaxPromptTokensCeiling);
}

}  // namespace seqrt
