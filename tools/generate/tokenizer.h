// What `seqrt generate` needs of a tokenizer: the ids of the prompt and
// the text of each generated token as it streams. Two kinds implement it:
// CharTokenizer (the model's metadata) and HfTokenizer (tokenizer.json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // One past the largest token id.
  virtual int64_t size() const = 0;
  // The ids the model is fed for `text` (with any tokens the tokenizer
  // adds, such as a beginning-of-sequence token).
  virtual Result<std::vector<int64_t>> encode(
      const std::string& text) const = 0;
  // The bytes token `id` (0 <= id < size()) adds to the text when it follows
  // other tokens. A UTF-8 character may span tokens: concatenated, the
  // tokens' bytes are the text.
  virtual std::string decode_token(int64_t id) const = 0;
  // The most bytes of text one token stands for: a prompt file longer than
  // this times the token limit cannot fit and is refused unread.
  virtual int64_t max_token_bytes() const = 0;
};

}  // namespace seqrt
