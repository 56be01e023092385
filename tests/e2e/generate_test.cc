// `seqrt generate` on the committed demo model (samples/demo/austen.seqrt):
// seeded sampling repeats, greedy decoding agrees across backends, the
// speeds are printed, bad models and prompts get one-line errors; and the
// model's Stream (prefill, then steps) equals one run over the whole text.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/model_loader.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

constexpr const char* kPrompt = "Emma was ";
constexpr const char* kStatsMarker = "\n\nprompt: ";

std::string demo_model() { return SEQRT_DEMO_MODEL; }

CommandResult generate(const std::vector<std::string>& options) {
  std::vector<std::string> args = {"generate", demo_model(), "--prompt",
                                   kPrompt};
  args.insert(args.end(), options.begin(), options.end());
  return run_seqrt(args);
}

// The streamed text: stdout before the speeds.
std::string text_of(const CommandResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  size_t stats = result.out.rfind(kStatsMarker);
  EXPECT_NE(stats, std::string::npos) << result.out;
  return result.out.substr(0, stats);
}

void expect_error(const CommandResult& result, const std::string& part) {
  SCOPED_TRACE(part);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err.rfind("seqrt: error: ", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
}

TEST(generate, SeededSamplingRepeatsAndStartsWithThePrompt) {
  std::vector<std::string> options = {"--backend", "cpu",          "--seed",
                                      "7",         "--max-tokens", "40"};
  std::string first = text_of(generate(options));
  std::string second = text_of(generate(options));
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.rfind(kPrompt, 0), 0u) << first;
  // The vocabulary is ASCII: one byte per generated character.
  EXPECT_EQ(first.size(), std::string(kPrompt).size() + 40) << first;
  std::string other = text_of(
      generate({"--backend", "cpu", "--seed", "8", "--max-tokens", "40"}));
  EXPECT_NE(first, other);
}

TEST(generate, GreedyDecodingOnCpuEqualsReference) {
  std::vector<std::string> greedy = {"--temperature", "0", "--max-tokens",
                                     "20"};
  std::vector<std::string> cpu = greedy, reference = greedy;
  cpu.insert(cpu.end(), {"--backend", "cpu"});
  reference.insert(reference.end(), {"--backend", "reference"});
  EXPECT_EQ(text_of(generate(cpu)), text_of(generate(reference)));
}

TEST(generate, TopKOfOneIsGreedy) {
  std::string greedy = text_of(generate(
      {"--backend", "cpu", "--temperature", "0", "--max-tokens", "20"}));
  std::string top1 =
      text_of(generate({"--backend", "cpu", "--temperature", "1.5", "--top-k",
                        "1", "--seed", "5", "--max-tokens", "20"}));
  EXPECT_EQ(greedy, top1);
}

TEST(generate, PrintsPromptAndDecodeSpeeds) {
  CommandResult result = generate({"--backend", "cpu", "--max-tokens", "12"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  // 9 prompt characters in one run; 12 generated: the first from the
  // prefill, 11 decode runs.
  std::regex speeds(
      "\n\nprompt: 9 tokens in [0-9.]+ ms, [0-9.]+ tokens/s\n"
      "decode: 11 tokens in [0-9.]+ ms, [0-9.]+ tokens/s \\(backend "
      "'cpu'\\)\n$");
  EXPECT_TRUE(std::regex_search(result.out, speeds)) << result.out;
}

TEST(generate, ModelWithoutVocabularyIsAnError) {
  std::string model = sample_dir() + "/tiny_mlp.seqrt";
  expect_error(run_seqrt({"generate", model, "--prompt", "a"}),
               "model '" + model + "' has no tokenizer");
}

TEST(generate, PromptCharacterOutsideVocabularyIsAnError) {
  expect_error(run_seqrt({"generate", demo_model(), "--prompt", "Emma@"}),
               "character '@' (number 5 of the prompt) is not in the model's "
               "vocabulary");
  expect_error(run_seqrt({"generate", demo_model(), "--prompt", "caf\xc3\xa9"}),
               "character U+00E9");
}

TEST(generate, BadOptionsAreErrors) {
  expect_error(generate({"--backend", "no-such-backend"}),
               "no backend 'no-such-backend' in this build; available: "
               "reference");
  CommandResult zero = generate({"--max-tokens", "0"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  CommandResult cold = generate({"--temperature", "-1"});
  EXPECT_EQ(cold.exit_code, 2) << cold.err;
}

// Every integer option is checked against its type's range: no wrapping
// of -1 into an unsigned seed, no value past int64 taken as something else.
TEST(generate, IntegerOptionsOutOfRangeNameTheFlagAndTheRange) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--seed", "-1"},
       "--seed: '-1' is not a whole number in [0, 18446744073709551615]"},
      {{"--seed", "18446744073709551616"}, "--seed: '18446744073709551616'"},
      {{"--top-k", "99999999999999999999"},
       "--top-k: '99999999999999999999' is not a whole number in [0, "
       "9223372036854775807]"},
      {{"--top-k", "-3"}, "--top-k: '-3'"},
      {{"--top-k", "2.5"}, "--top-k: '2.5'"},
      {{"--max-tokens", "0"},
       "--max-tokens: '0' is not a whole number in [1, "
       "1000000]"},
      {{"--max-tokens", "99999999999999999999"}, "--max-tokens"},
      {{"--max-prompt-tokens", "0"},
       "--max-prompt-tokens: '0' is not a whole number in [1, 1000000]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    CommandResult result = generate(c.args);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
  }
  // The ends of the ranges are accepted.
  EXPECT_EQ(generate({"--seed", "18446744073709551615", "--top-k",
                      "9223372036854775807", "--max-tokens", "1"})
                .exit_code,
            0);
}

// --tokenizer with files that do not fit: one-line errors naming the file
// and what is wrong (python/tests/test_generate_hf.py runs real exports).
TEST(generate, TokenizerJsonErrorsNameTheFile) {
  std::string gpt2 = std::string(SEQRT_GENERATE_TESTDATA) + "/gpt2_bpe.json";
  std::string mlp = sample_dir() + "/tiny_mlp.seqrt";
  expect_error(
      run_seqrt({"generate", mlp, "--tokenizer", gpt2, "--prompt", "a"}),
      "model '" + mlp + "' has no state pairs: generate needs a decoder");
  // The demo scores its ~60 characters, not the fixture's 600 tokens.
  expect_error(run_seqrt({"generate", demo_model(), "--tokenizer", gpt2,
                          "--prompt", "a"}),
               "tokenizer '" + gpt2 +
                   "' has 600 tokens but the model's output 'logits' scores "
                   "only");
  std::string missing = sample_dir() + "/no_tokenizer.json";
  expect_error(run_seqrt({"generate", demo_model(), "--tokenizer", missing,
                          "--prompt", "a"}),
               "tokenizer file '" + missing + "': cannot open");
  std::string bad = sample_dir() + "/unigram.json";
  write_bytes(bad, R"({"model": {"type": "Unigram", "vocab": []}})");
  expect_error(run_seqrt({"generate", demo_model(), "--tokenizer", bad,
                          "--prompt", "a"}),
               "tokenizer file '" + bad +
                   "': model.type 'Unigram' is not supported (supported: "
                   "BPE)");
}

TEST(generate, PromptFileGivesThePrompt) {
  std::string path = sample_dir() + "/prompt.txt";
  write_bytes(path, "It is a truth\nuniversally");
  CommandResult result =
      run_seqrt({"generate", demo_model(), "--prompt-file", path,
                 "--max-tokens", "5", "--temperature", "0"});
  std::string text = text_of(result);
  EXPECT_EQ(text.rfind("It is a truth\nuniversally", 0), 0u) << text;
  EXPECT_NE(result.out.find("prompt: 25 tokens"), std::string::npos)
      << result.out;
}

TEST(generate, PromptSourcesAreExclusiveAndOneIsNeeded) {
  std::string path = sample_dir() + "/prompt_both.txt";
  write_bytes(path, "It");
  CommandResult both = run_seqrt(
      {"generate", demo_model(), "--prompt", "It", "--prompt-file", path});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--prompt excludes --prompt-file"), std::string::npos)
      << both.err;
  CommandResult none = run_seqrt({"generate", demo_model()});
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("--prompt-file"), std::string::npos) << none.err;
  expect_error(run_seqrt({"generate", demo_model(), "--prompt-file",
                          sample_dir() + "/no_such_prompt.txt"}),
               "no_such_prompt.txt");
}

TEST(generate, AFifoAsPromptFileIsRefusedNotWaitedOn) {
  std::string fifo = sample_dir() + "/prompt_fifo.txt";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error(run_seqrt({"generate", demo_model(), "--prompt-file", fifo}),
               "'" + fifo + "' is not a regular file");
  std::remove(fifo.c_str());
}

TEST(generate, PromptsPastMaxPromptTokensAreRefused) {
  expect_error(generate({"--max-prompt-tokens", "5"}),
               "the prompt is 9 tokens, above --max-prompt-tokens (5); raise "
               "it (at most 1000000)");
  // 4 bytes per token at most: a bigger file is refused before it is read.
  std::string path = sample_dir() + "/long_prompt.txt";
  write_bytes(path, std::string(200 * 1024, 'a'));
  expect_error(run_seqrt({"generate", demo_model(), "--prompt-file", path}),
               "prompt file '" + path +
                   "' is 204800 bytes, more than 4096 tokens can be; raise "
                   "--max-prompt-tokens");
  // Within the byte bound, the token count still decides.
  write_bytes(path, std::string(5000, 'a'));
  expect_error(run_seqrt({"generate", demo_model(), "--prompt-file", path}),
               "the prompt is 5000 tokens, above --max-prompt-tokens (4096)");
}

// The feeds of a run on `ids`; the states start from zeros, the KV cache
// (whose past length no input determines) empty.
std::map<std::string, Tensor> first_feeds(const std::vector<int64_t>& ids) {
  return {{"tokens", Tensor::from_vector<int64_t>(
                         {1, static_cast<int64_t>(ids.size())}, ids)}};
}

TEST(generate, StreamPrefillAndStepsEqualTheWholeSequence) {
  Result<Graph> graph = load_model(demo_model());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  SessionOptions options;
  options.backend = "cpu";
  Result<std::unique_ptr<Session>> session =
      Session::create(std::move(*graph), options);
  ASSERT_TRUE(session.is_ok()) << session.status().message();

  // Any ids below the vocabulary size (80) make the comparison.
  std::vector<int64_t> ids = {37, 58, 58, 66, 1, 76, 54, 72, 1, 54, 1, 73};
  auto whole = (*session)->run(first_feeds(ids));
  ASSERT_TRUE(whole.is_ok()) << whole.status().message();
  const Tensor& expected = whole->at("logits");
  int64_t vocab = expected.dim(2);

  Stream stream(**session);
  std::vector<int64_t> prompt(ids.begin(), ids.begin() + 5);
  auto out = stream.run(first_feeds(prompt));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  std::vector<Tensor> rows = {out->at("logits")};
  for (size_t t = prompt.size(); t < ids.size(); ++t) {
    out = stream.run(
        {{"tokens", Tensor::from_vector<int64_t>({1, 1}, {ids[t]})}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    rows.push_back(out->at("logits"));
  }
  int64_t position = 0;
  for (const Tensor& part : rows) {
    for (int64_t i = 0; i < part.num_elements(); ++i) {
      float got = part.data_as<float>()[i];
      float want = expected.data_as<float>()[position * vocab + i];
      ASSERT_NEAR(got, want, 1e-4 + 1e-4 * std::fabs(want))
          << "position " << position + i / vocab << ", token " << i % vocab;
    }
    position += part.dim(1);
  }
  EXPECT_EQ(position, static_cast<int64_t>(ids.size()));
}

}  // namespace
}  // namespace seqrt::e2e
