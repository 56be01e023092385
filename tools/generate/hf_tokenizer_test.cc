// HfTokenizer against the `tokenizers` library: the fixtures in testdata/
// (make_bpe_fixture.py) hold tokenizer.json files and, per case string, the
// ids the library encodes it to and the text it decodes them to. Also the
// errors for files it must refuse, each naming the file and the component.
#include "tools/generate/hf_tokenizer.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tools/generate/byte_level.h"
#include "tools/generate/unicode_class.h"

namespace seqrt {
namespace {

std::string testdata(const std::string& name) {
  return std::string(SEQRT_GENERATE_TESTDATA) + "/" + name;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

HfTokenizer load(const std::string& name) {
  Result<HfTokenizer> tokenizer = HfTokenizer::load(testdata(name));
  EXPECT_TRUE(tokenizer.is_ok()) << tokenizer.status().message();
  return std::move(*tokenizer);
}

// Every case of `stem`_cases.json: encode gives the library's ids, decode
// its text.
void expect_cases(const std::string& stem) {
  HfTokenizer tokenizer = load(stem + ".json");
  nlohmann::json cases = read_json(testdata(stem + "_cases.json"));
  ASSERT_GE(cases.size(), 50u);
  for (const nlohmann::json& item : cases) {
    std::string text = item["text"].get<std::string>();
    SCOPED_TRACE("text: \"" + text + "\"");
    Result<std::vector<int64_t>> ids = tokenizer.encode(text);
    ASSERT_TRUE(ids.is_ok()) << ids.status().message();
    EXPECT_EQ(*ids, item["ids"].get<std::vector<int64_t>>());
    EXPECT_EQ(tokenizer.decode(*ids, /*skip_special=*/true),
              item["decoded"].get<std::string>());
  }
}

TEST(HfTokenizer, Gpt2ByteLevelEqualsTheLibrary) { expect_cases("gpt2_bpe"); }

TEST(HfTokenizer, Gpt2OptionsEqualTheLibrary) { expect_cases("gpt2_variant"); }

TEST(HfTokenizer, LlamaByteFallbackEqualsTheLibrary) {
  expect_cases("llama_bpe");
}

TEST(HfTokenizer, LlamaMetaspaceEqualsTheLibrary) {
  expect_cases("llama_metaspace");
}

TEST(HfTokenizer, StreamedTokensConcatenateToTheText) {
  HfTokenizer tokenizer = load("gpt2_bpe.json");
  // Multi-byte characters split across tokens come out whole once joined.
  for (std::string text : {"héllo wörld 🙂🚀 日本語", "a\n\n  b\tc"}) {
    Result<std::vector<int64_t>> ids = tokenizer.encode(text);
    ASSERT_TRUE(ids.is_ok());
    std::string joined;
    for (int64_t id : *ids) joined += tokenizer.decode_token(id);
    EXPECT_EQ(joined, text);
  }
  HfTokenizer llama = load("llama_bpe.json");
  Result<std::vector<int64_t>> ids = llama.encode("Привет 🙂");
  ASSERT_TRUE(ids.is_ok());
  std::string joined;
  for (size_t i = 1; i < ids->size(); ++i)
    joined += llama.decode_token((*ids)[i]);
  EXPECT_EQ(joined, " Привет 🙂");  // the "▁" the normalizer prepends
}

TEST(HfTokenizer, SpecialTokenIsFoundAndSized) {
  HfTokenizer tokenizer = load("gpt2_bpe.json");
  EXPECT_EQ(tokenizer.id_of("<|endoftext|>"), std::optional<int64_t>(0));
  EXPECT_EQ(tokenizer.decode_token(0), "<|endoftext|>");
  EXPECT_EQ(tokenizer.size(), 600);
  ASSERT_EQ(tokenizer.added_tokens().size(), 1u);
  EXPECT_TRUE(tokenizer.added_tokens()[0].special);
}

TEST(Gpt2Split, FollowsTheRegex) {
  auto split = [](const std::string& text) {
    Result<std::vector<std::string_view>> words = split_gpt2(text);
    EXPECT_TRUE(words.is_ok());
    return std::vector<std::string>(words->begin(), words->end());
  };
  using Words = std::vector<std::string>;
  EXPECT_EQ(split("Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split("don't DON'T"), (Words{"don", "'t", " DON", "'", "T"}));
  EXPECT_EQ(split("a   b"), (Words{"a", "  ", " b"}));
  EXPECT_EQ(split("a\n\nb "), (Words{"a", "\n", "\n", "b", " "}));
  EXPECT_EQ(split("x12 3.5!!"), (Words{"x", "12", " 3", ".", "5", "!!"}));
  EXPECT_EQ(split("héllo wörld"), (Words{"héllo", " wörld"}));
  EXPECT_EQ(split("日本語 ٣٤"), (Words{"日本語", " ٣٤"}));
  EXPECT_FALSE(split_gpt2("bad \xC3").is_ok());
}

TEST(UnicodeClass, LettersNumbersWhitespace) {
  EXPECT_EQ(char_class(U'é'), CharClass::kLetter);
  EXPECT_EQ(char_class(U'語'), CharClass::kLetter);
  EXPECT_EQ(char_class(U'٣'), CharClass::kNumber);  // ARABIC-INDIC THREE
  EXPECT_EQ(char_class(U'½'), CharClass::kNumber);
  EXPECT_EQ(char_class(0x3000), CharClass::kWhitespace);
  EXPECT_EQ(char_class(0x85), CharClass::kWhitespace);
  EXPECT_EQ(char_class(U'€'), CharClass::kOther);
  EXPECT_EQ(char_class(0x1F642), CharClass::kOther);  // 🙂
  EXPECT_FALSE(decode_utf8("\xED\xA0\x80").is_ok());  // a surrogate
  EXPECT_FALSE(decode_utf8("\xC0\xAF").is_ok());      // overlong
}

TEST(ByteLevelMap, RoundTripsEveryByte) {
  ByteLevelMap map;
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  std::string mapped = map.encode(all);
  EXPECT_EQ(map.encode(" "), "Ġ");
  EXPECT_EQ(map.encode("\n"), "Ċ");
  EXPECT_EQ(map.decode(mapped), std::optional<std::string>(all));
  EXPECT_EQ(map.decode("€"), std::nullopt);
}

// ---- files it must refuse ----------------------------------------------

class BadTokenizerFile : public testing::Test {
 protected:
  void TearDown() override { std::remove(path_.c_str()); }
  // The error of loading `text` as a tokenizer.json.
  std::string error_of(const std::string& text) {
    std::ofstream(path_) << text;
    Result<HfTokenizer> tokenizer = HfTokenizer::load(path_);
    EXPECT_FALSE(tokenizer.is_ok());
    if (tokenizer.is_ok()) return std::string();
    std::string message = tokenizer.status().message();
    EXPECT_NE(message.find("tokenizer file '" + path_ + "'"), std::string::npos)
        << message;
    return message;
  }
  // The GPT-2 fixture with one change.
  std::string fixture_with(const std::string& pointer,
                           const nlohmann::json& value) {
    nlohmann::json file = read_json(testdata("gpt2_bpe.json"));
    file[nlohmann::json::json_pointer(pointer)] = value;
    return file.dump();
  }
  std::string path_ =
      testing::TempDir() + "tokenizer_" + std::to_string(::getpid()) + ".json";
};

#define EXPECT_MENTIONS(message, part) \
  EXPECT_NE((message).find(part), std::string::npos) << (message)

TEST_F(BadTokenizerFile, NotJson) {
  EXPECT_MENTIONS(error_of("{\"model\": "), "not valid JSON");
  EXPECT_MENTIONS(error_of("[1, 2]"), "expected a JSON object");
}

TEST_F(BadTokenizerFile, MissingModel) {
  EXPECT_MENTIONS(error_of("{\"version\": \"1.0\"}"), "model is missing");
}

TEST_F(BadTokenizerFile, OtherModelTypes) {
  EXPECT_MENTIONS(error_of(fixture_with("/model/type", "WordPiece")),
                  "model.type 'WordPiece' is not supported (supported: BPE)");
  EXPECT_MENTIONS(error_of(fixture_with("/model/type", "Unigram")),
                  "model.type 'Unigram'");
}

TEST_F(BadTokenizerFile, UnsupportedComponents) {
  EXPECT_MENTIONS(error_of(fixture_with("/normalizer", {{"type", "NFKC"}})),
                  "normalizer.type 'NFKC' is not supported");
  nlohmann::json split = {
      {"type", "Sequence"},
      {"pretokenizers", nlohmann::json::array({{{"type", "Split"}}})}};
  EXPECT_MENTIONS(error_of(fixture_with("/pre_tokenizer", split)),
                  "pre_tokenizer.type 'Sequence' is not supported");
  EXPECT_MENTIONS(error_of(fixture_with("/decoder", {{"type", "WordPiece"}})),
                  "decoder.type 'WordPiece'");
  EXPECT_MENTIONS(
      error_of(fixture_with("/post_processor", {{"type", "BertProcessing"}})),
      "post_processor.type 'BertProcessing'");
  EXPECT_MENTIONS(
      error_of(fixture_with("/normalizer", {{"type", "Replace"},
                                            {"pattern", {{"Regex", " +"}}},
                                            {"content", " "}})),
      "normalizer.pattern: a Regex pattern is not supported");
  EXPECT_MENTIONS(error_of(fixture_with("/model/dropout", 0.1)),
                  "model.dropout");
}

TEST_F(BadTokenizerFile, DeeplyNestedSequences) {
  nlohmann::json node = {{"type", "Prepend"}, {"prepend", "_"}};
  for (int i = 0; i < 50; ++i) {
    node = {{"type", "Sequence"},
            {"normalizers", nlohmann::json::array({node})}};
  }
  EXPECT_MENTIONS(error_of(fixture_with("/normalizer", node)),
                  "Sequences nested more than 8 deep");
}

TEST_F(BadTokenizerFile, InconsistentModel) {
  EXPECT_MENTIONS(error_of(fixture_with("/model/merges/3", "Ġ nosuchtoken")),
                  "model.merges[3]");
  EXPECT_MENTIONS(error_of(fixture_with("/model/vocab/!", -4)),
                  "model.vocab[\"!\"] must be an id");
  // A wild id would size the tables past the file.
  EXPECT_MENTIONS(error_of(fixture_with("/model/vocab/!", 2000000000)),
                  "model.vocab[\"!\"] must be an id in [0, 1455]");
  EXPECT_MENTIONS(error_of(fixture_with("/added_tokens/0/id", 2000000000)),
                  "added token \"<|endoftext|>\" has id 2000000000");
  EXPECT_MENTIONS(error_of(fixture_with("/model/vocab", "words")),
                  "model.vocab must be an object");
  EXPECT_MENTIONS(error_of(fixture_with("/model/unk_token", 7)),
                  "model.unk_token must be a string");
  EXPECT_MENTIONS(error_of(fixture_with("/added_tokens/0/id", "zero")),
                  "added_tokens[0].id");
}

TEST(HfTokenizerFile, MissingFileNamesIt) {
  Result<HfTokenizer> tokenizer = HfTokenizer::load("/nonexistent/tok.json");
  ASSERT_FALSE(tokenizer.is_ok());
  EXPECT_MENTIONS(tokenizer.status().message(), "/nonexistent/tok.json");
}

}  // namespace
}  // namespace seqrt
