// libFuzzer target for the tokenizer.json reader of `seqrt generate
// --tokenizer` (tools/generate/hf_tokenizer.h): the bytes as JSON, read as a
// tokenizer; one that is accepted encodes a fixed text and the input's own
// first bytes, decodes the ids, and decodes the first 4096 ids one by one.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/generate/hf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  // parse() without exceptions gives a discarded value for bad JSON.
  nlohmann::json file = nlohmann::json::parse(bytes, nullptr, false);
  if (file.is_discarded()) return 0;
  seqrt::Result<seqrt::HfTokenizer> tokenizer =
      seqrt::HfTokenizer::from_json(file);
  if (!tokenizer.is_ok()) return 0;
  for (const std::string& text :
       {std::string("Hello w\xC3\xB6rld \xF0\x9F\x99\x82 <|endoftext|>\n\n  x"),
        bytes.substr(0, 256)}) {
    seqrt::Result<std::vector<int64_t>> ids = tokenizer->encode(text);
    if (ids.is_ok()) (void)tokenizer->decode(*ids, /*skip_special=*/true);
  }
  int64_t count = std::min<int64_t>(tokenizer->size(), 4096);
  for (int64_t id = 0; id < count; ++id) (void)tokenizer->decode_token(id);
  return 0;
}
