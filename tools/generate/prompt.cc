#include "tools/generate/prompt.h"

#include <utility>

#include "graph/regular_file.h"
#include "tools/generate/bounded_read.h"

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
  SEQRT_ASSIGN_OR_RETURN(std::string text,
                         read_bounded(std::move(file), path, max_bytes));
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
