// Where `seqrt generate` gets its prompt and how long it may be. The prompt
// is prefilled in one run, whose memory and time grow with its length, so
// it is capped in tokens (--max-prompt-tokens); --prompt-file takes a
// prompt longer than a command line may be (the OS caps argv near 128 KiB).
#pragma once

#include <cstdint>
#include <string>

#include "graph/status.h"

namespace seqrt {

inline constexpr int64_t kDefaultMaxPromptTokens = 4096;
inline constexpr int64_t kMaxPromptTokensCeiling = 1000000;
// The text of the prompt file at `path`, opened as a regular file (not a
// FIFO or device). A file of more than max_token_bytes * max_tokens bytes
// is refused before it is read: it cannot fit.
Result<std::string> read_prompt_file(const std::string& path,
                                     int64_t max_tokens,
                                     int64_t max_token_bytes);

// An error when a prompt of `tokens` tokens is past `max_tokens`.
Status check_prompt_length(int64_t tokens, int64_t max_tokens);

}  // namespace seqrt
