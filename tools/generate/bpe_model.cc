#include "tools/generate/bpe_model.h"

#include <queue>

#include <fmt/format.h>

#include "tools/generate/json_fields.h"
#include "tools/generate/unicode_class.h"

namespace seqrt {
namespace {

// The merge "a b" (older files) or ["a", "b"] (tokenizers >= 0.20).
Result<std::pair<std::string, std::string>> merge_parts(
    const nlohmann::json& entry, size_t index) {
  if (entry.is_string()) {
    std::string text = entry.get<std::string>();
    size_t space = text.find(' ');
    if (space != std::string::npos &&
        text.find(' ', space + 1) == std::string::npos) {
      return std::make_pair(text.substr(0, space), text.substr(space + 1));
    }
  } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
             entry[1].is_string()) {
    return std::make_pair(entry[0].get<std::string>(),
                          entry[1].get<std::string>());
  }
  return invalid_model(
      "model.merges[{}] must be \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"], got "
      "{}",
      index, entry.dump());
}

}  // namespace

Result<BpeModel> BpeModel::from_json(const nlohmann::json& model) {
  if (find_field(model, "dropout") != nullptr) {
    return unsupported("model.dropout is not supported (it is for training)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    SEQRT_ASSIGN_OR_RETURN(std::optional<std::string> affix,
                           optional_string(model, key, "model"));
    if (affix && !affix->empty()) {
      return unsupported("model.{} (\"{}\") is not supported", key, *affix);
    }
  }
  BpeModel bpe;
  SEQRT_ASSIGN_OR_RETURN(bpe.fuse_unk_,
                         optional_bool(model, "fuse_unk", "model", false));
  SEQRT_ASSIGN_OR_RETURN(bpe.byte_fallback_,
                         optional_bool(model, "byte_fallback", "model", false));
  SEQRT_ASSIGN_OR_RETURN(bpe.ignore_merges_,
                         optional_bool(model, "ignore_merges", "model", false));
  const nlohmann::json* vocab = find_field(model, "vocab");
  if (vocab == nullptr || !vocab->is_object()) {
    return invalid_model("model.vocab must be an object of token: id");
  }
  SEQRT_RETURN_IF_ERROR(bpe.read_vocab(*vocab));
  const nlohmann::json* merges = find_field(model, "merges");
  if (merges == nullptr || !merges->is_array()) {
    return invalid_model("model.merges must be a list");
  }
  SEQRT_RETURN_IF_ERROR(bpe.read_merges(*merges));
  SEQRT_ASSIGN_OR_RETURN(std::optional<std::string> unk,
                         optional_string(model, "unk_token", "model"));
  if (unk) {
    bpe.unk_ = bpe.id_of(*unk);
    if (!bpe.unk_) {
      return invalid_model("model.unk_token \"{}\" is not in the vocabulary",
                           *unk);
    }
  }
  for (int byte = 0; byte < 256; ++byte) {
    bpe.byte_ids_[byte] =
        bpe.id_of(fmt::format("<0x{:02X}>", byte)).value_or(-1);
  }
  return bpe;
}

Status BpeModel::read_vocab(const nlohmann::json& vocab) {
  if (vocab.empty()) return invalid_model("model.vocab is empty");
  const int64_t limit = max_token_id(static_cast<int64_t>(vocab.size()));
  for (auto entry = vocab.begin(); entry != vocab.end(); ++entry) {
    const nlohmann::json& id = entry.value();
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > limit) {
      return invalid_model(
          "model.vocab[\"{}\"] must be an id in [0, {}] (twice the {} "
          "entries, plus 256), got {}",
          entry.key(), limit, vocab.size(), id.dump());
    }
    int64_t value = id.get<int64_t>();
    if (value >= size()) {
      tokens_.resize(value + 1);
      has_token_.resize(value + 1, false);
    }
    if (has_token_[value]) {
      return invalid_model(
          "model.vocab: id {} is given to both \"{}\" and \"{}\"", value,
          tokens_[value], entry.key());
    }
    tokens_[value] = entry.key();
    has_token_[value] = true;
    vocab_.emplace(entry.key(), value);
  }
  return Status::ok();
}

Status BpeModel::read_merges(const nlohmann::json& merges) {
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(auto parts, merge_parts(merges[i], i));
    std::optional<int64_t> left = id_of(parts.first);
    std::optional<int64_t> right = id_of(parts.second);
    std::optional<int64_t> merged = id_of(parts.first + parts.second);
    if (!left || !right || !merged) {
      return invalid_model(
          "model.merges[{}] (\"{}\" + \"{}\"): \"{}\" is not in the "
          "vocabulary",
          i, parts.first, parts.second,
          !left    ? parts.first
          : !right ? parts.second
                   : parts.first + parts.second);
    }
    // The first of repeated merges counts, as in `tokenizers`.
    merges_.emplace(pair_key(*left, *right),
                    Merge{static_cast<int64_t>(i), *merged});
  }
  return Status::ok();
}

std::optional<int64_t> BpeModel::id_of(std::string_view token) const {
  auto found = vocab_.find(std::string(token));
  if (found == vocab_.end()) return std::nullopt;
  return found->second;
}

const std::string* BpeModel::token_of(int64_t id) const {
  if (id < 0 || id >= size() || !has_token_[id]) return nullptr;
  return &tokens_[id];
}

Status BpeModel::initial_symbols(std::string_view word,
                                 std::vector<int64_t>& symbols) const {
  SEQRT_ASSIGN_OR_RETURN(std::vector<CodePoint> points, decode_utf8(word));
  bool last_unk = false;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    std::string_view text =
        word.substr(points[i].offset, points[i + 1].offset - points[i].offset);
    if (std::optional<int64_t> id = id_of(text)) {
      symbols.push_back(*id);
      last_unk = false;
      continue;
    }
    bool all_bytes = byte_fallback_;
    for (char byte : text) {
      all_bytes = all_bytes && byte_ids_[static_cast<unsigned char>(byte)] >= 0;
    }
    if (all_bytes) {
      for (char byte : text) {
        symbols.push_back(byte_ids_[static_cast<unsigned char>(byte)]);
      }
      last_unk = false;
      continue;
    }
    if (!unk_) {
      return invalid_argument(
          "character at byte {} of \"{}\" is not in the vocabulary and the "
          "tokenizer has no unk_token",
          points[i].offset, std::string(word));
    }
    if (!(fuse_unk_ && last_unk)) symbols.push_back(*unk_);
    last_unk = true;
  }
  return Status::ok();
}

void BpeModel::merge(std::vector<int64_t>& symbols) const {
  // A linked list over `symbols` and a queue of candidate merges, lowest
  // rank first, then leftmost; a candidate whose symbols changed since it
  // was queued is skipped. O(n log n) for a word of n characters (a
  // tokenizer without a pre-tokenizer makes the whole prompt one word).
  struct Candidate {
    int64_t rank;
    size_t left;
    int64_t left_id, right_id, merged;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  const size_t n = symbols.size();
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto offer = [&](size_t left) {
    if (left == kNone || next[left] == kNone) return;
    auto found = merges_.find(pair_key(symbols[left], symbols[next[left]]));
    if (found == merges_.end()) return;
    queue.push({found->second.rank, left, symbols[left], symbols[next[left]],
                found->second.merged});
  };
  for (size_t i = 0; i + 1 < n; ++i) offer(i);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    size_t right = next[top.left];
    if (!alive[top.left] || right == kNone ||
        symbols[top.left] != top.left_id || symbols[right] != top.right_id) {
      continue;
    }
    symbols[top.left] = top.merged;
    alive[right] = false;
    next[top.left] = next[right];
    if (next[right] != kNone) prev[next[right]] = top.left;
    offer(prev[top.left]);
    offer(top.left);
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (alive[i]) symbols[kept++] = symbols[i];
  }
  symbols.resize(kept);
}

Status BpeModel::tokenize(std::string_view word,
                          std::vector<int64_t>& ids) const {
  if (word.empty()) return Status::ok();
  if (ignore_merges_) {
    if (std::optional<int64_t> whole = id_of(word)) {
      ids.push_back(*whole);
      return Status::ok();
    }
  }
  std::vector<int64_t> symbols;
  SEQRT_RETURN_IF_ERROR(initial_symbols(word, symbols));
  merge(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  return Status::ok();
}

}  // namespace seqrt
