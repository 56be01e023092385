// The end-of-sequence rule and the position limit read from the JSON files
// beside a model and its tokenizer.json (hf_config.h).
#include "tools/generate/hf_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace seqrt {
namespace {

class GenerationConfigTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "hf_config_" + std::to_string(::getpid()) +
           "_" + testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override {
    for (const char* name :
         {"config.json", "generation_config.json", "tokenizer_config.json"}) {
      std::remove((dir_ + "/" + name).c_str());
    }
    ::rmdir(dir_.c_str());
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  static HfTokenizer fixture(const std::string& name) {
    Result<HfTokenizer> tokenizer =
        HfTokenizer::load(std::string(SEQRT_GENERATE_TESTDATA) + "/" + name);
    EXPECT_TRUE(tokenizer.is_ok()) << tokenizer.status().message();
    return std::move(*tokenizer);
  }
  Result<GenerationConfig> read(const HfTokenizer& tokenizer) {
    return read_generation_config(dir_ + "/model.onnx",
                                  dir_ + "/tokenizer.json", tokenizer);
  }
  std::string dir_;
};

TEST_F(GenerationConfigTest, TheOnlySpecialTokenEndsTheText) {
  Result<GenerationConfig> config = read(fixture("gpt2_bpe.json"));
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->eos_ids, std::vector<int64_t>{0});
  EXPECT_NE(config->eos_source.find("\"<|endoftext|>\""), std::string::npos);
  EXPECT_FALSE(config->max_positions);
  // <unk>, <s> and </s>: no rule picks one.
  config = read(fixture("llama_bpe.json"));
  ASSERT_TRUE(config.is_ok());
  EXPECT_TRUE(config->eos_ids.empty());
}

TEST_F(GenerationConfigTest, TokenizerConfigNamesTheToken) {
  HfTokenizer llama = fixture("llama_bpe.json");
  write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  Result<GenerationConfig> config = read(llama);
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->eos_ids, std::vector<int64_t>{2});
  write("tokenizer_config.json",
        R"({"eos_token": {"content": "</s>", "special": true}})");
  config = read(llama);
  ASSERT_TRUE(config.is_ok());
  EXPECT_EQ(config->eos_ids, std::vector<int64_t>{2});
  write("tokenizer_config.json", R"({"eos_token": "<|nope|>"})");
  config = read(llama);
  ASSERT_FALSE(config.is_ok());
  EXPECT_NE(config.status().message().find("eos_token \"<|nope|>\" is not a "
                                           "token"),
            std::string::npos)
      << config.status().message();
}

TEST_F(GenerationConfigTest, ModelConfigsComeFirst) {
  HfTokenizer gpt2 = fixture("gpt2_bpe.json");
  write("config.json", R"({"eos_token_id": 5, "n_positions": 32})");
  Result<GenerationConfig> config = read(gpt2);
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->eos_ids, std::vector<int64_t>{5});
  EXPECT_EQ(config->max_positions, std::optional<int64_t>(32));
  EXPECT_NE(config->max_positions_source.find("n_positions in '" + dir_ +
                                              "/config.json'"),
            std::string::npos);
  write("generation_config.json", R"({"eos_token_id": [7, 8]})");
  config = read(gpt2);
  ASSERT_TRUE(config.is_ok());
  EXPECT_EQ(config->eos_ids, (std::vector<int64_t>{7, 8}));
}

TEST_F(GenerationConfigTest, BadConfigsNameTheFile) {
  HfTokenizer gpt2 = fixture("gpt2_bpe.json");
  write("config.json", R"({"eos_token_id": 50256})");
  Result<GenerationConfig> config = read(gpt2);
  ASSERT_FALSE(config.is_ok());
  EXPECT_NE(config.status().message().find(
                "config.json': eos_token_id 50256 is past the 600 tokens"),
            std::string::npos)
      << config.status().message();
  write("config.json", R"({"n_positions": "many"})");
  config = read(gpt2);
  ASSERT_FALSE(config.is_ok());
  EXPECT_NE(config.status().message().find("config.json"), std::string::npos);
  write("config.json", "{not json");
  config = read(gpt2);
  ASSERT_FALSE(config.is_ok());
  EXPECT_NE(config.status().message().find("is not valid JSON"),
            std::string::npos)
      << config.status().message();
}

}  // namespace
}  // namespace seqrt
