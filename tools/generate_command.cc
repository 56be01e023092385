// seqrt generate MODEL (--prompt TEXT | --prompt-file PATH)
// [--tokenizer tokenizer.json [--ignore-eos]] [--backend NAME]
// [--max-tokens N] [--max-prompt-tokens N] [--temperature T] [--top-k K]
// [--seed S] [--no-mmap]: streams text from a generative model, either one
// with a character tokenizer in its metadata (samples/demo) or a Hugging
// Face decoder export with its tokenizer.json. The prompt is prefilled in
// one run, then each token is one decode run; the model's state (KV cache,
// scan and memory state) stays in a Stream.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/backend_registry.h"
#include "runtime/model_loader.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "tools/backend_option_flags.h"
#include "tools/command.h"
#include "tools/generate/char_tokenizer.h"
#include "tools/generate/decoder_interface.h"
#include "tools/generate/hf_config.h"
#include "tools/generate/hf_tokenizer.h"
#include "tools/generate/prompt.h"
#include "tools/generate/sampler.h"
#include "tools/integer_flag.h"
#include "tools/limit_flags.h"
#include "tools/model_flags.h"
#include "tools/progress_display.h"

namespace seqrt {
namespace {

constexpr int64_t kMaxTokens = 1000000;

struct GenerateOptions {
  std::string model;
  std::string prompt;
  std::string prompt_file;
  std::string tokenizer;  // tokenizer.json; empty: the model's metadata
  bool ignore_eos = false;
  std::string backend = default_backend();
  int64_t max_tokens = 200;
  int64_t max_prompt_tokens = kDefaultMaxPromptTokens;
  bool no_mmap = false;
  SamplerOptions sampler;
  LimitFlags limits;
  std::vector<std::string> backend_options;  // --backend-option KEY=VALUE
  // --kv-capacity: tokens per KV cache; -1: the prompt plus --max-tokens
  // where the model has a KV cache of that form, 0: grow by concatenation.
  int64_t kv_capacity = -1;
};

// The tokenizer and what its files say about ending the text.
struct Vocabulary {
  std::unique_ptr<Tokenizer> tokenizer;
  std::string source;       // for messages: the tokenizer's file
  bool exact = true;        // the logits must be exactly its size
  GenerationConfig config;  // tokenizer.json only
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A tokenizer.json with more tokens than the model scores is not the
// model's (its ids would index past the embedding).
Status check_scored_tokens(int64_t scored, const Vocabulary& vocabulary) {
  int64_t size = vocabulary.tokenizer->size();
  if (vocabulary.exact || scored >= size) return Status::ok();
  return invalid_model(
      "tokenizer '{}' has {} tokens but the model's output '{}' scores only "
      "{}: the tokenizer does not belong to this model",
      vocabulary.source, size, kLogitsOutput, scored);
}

// Checks `logits` (1, seq, V) against the vocabulary: V equal to its size
// for a model's own character tokenizer; at least its size for a
// tokenizer.json (exports may pad the vocabulary).
Status check_logits(const Tensor& logits, const Vocabulary& vocabulary) {
  int64_t size = vocabulary.tokenizer->size();
  if (logits.dtype() != DType::kF32 || logits.rank() != 3 ||
      logits.dim(0) != 1 || logits.dim(1) < 1) {
    return invalid_model("output '{}' is {} {}, expected f32 (1, seq, {})",
                         kLogitsOutput, dtype_name(logits.dtype()),
                         dims_to_string(logits.dims()), size);
  }
  if (vocabulary.exact && logits.dim(2) != size) {
    return invalid_model(
        "output '{}' is {} {}, expected f32 (1, seq, {}) for a vocabulary of "
        "{} characters",
        kLogitsOutput, dtype_name(logits.dtype()),
        dims_to_string(logits.dims()), size, size);
  }
  return check_scored_tokens(logits.dim(2), vocabulary);
}

// The token chosen from the last row of `logits`, among the tokenizer's.
Result<int64_t> next_token(Sampler& sampler, const Tensor& logits,
                           const Vocabulary& vocabulary) {
  SEQRT_RETURN_IF_ERROR(check_logits(logits, vocabulary));
  const float* last =
      logits.data_as<float>() + (logits.dim(1) - 1) * logits.dim(2);
  return sampler.next(last, vocabulary.tokenizer->size());
}

void print_text(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

double per_second(int64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

// --prompt, or the text of --prompt-file.
Result<std::string> prompt_text(const GenerateOptions& options,
                                int64_t max_token_bytes) {
  if (options.prompt_file.empty()) return options.prompt;
  return read_prompt_file(options.prompt_file, options.max_prompt_tokens,
                          max_token_bytes);
}

// --tokenizer's file and the configuration files beside it and the model.
Result<Vocabulary> load_tokenizer_json(const GenerateOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(HfTokenizer tokenizer,
                         HfTokenizer::load(options.tokenizer));
  Vocabulary vocabulary;
  SEQRT_ASSIGN_OR_RETURN(
      vocabulary.config,
      read_generation_config(options.model, options.tokenizer, tokenizer));
  if (options.ignore_eos) vocabulary.config.eos_ids.clear();
  vocabulary.tokenizer = std::make_unique<HfTokenizer>(std::move(tokenizer));
  vocabulary.source = options.tokenizer;
  vocabulary.exact = false;
  return vocabulary;
}

Result<Vocabulary> metadata_tokenizer(const Graph& graph,
                                      const std::string& model) {
  SEQRT_ASSIGN_OR_RETURN(CharTokenizer tokenizer,
                         CharTokenizer::from_metadata(graph.metadata, model));
  Vocabulary vocabulary;
  vocabulary.tokenizer = std::make_unique<CharTokenizer>(std::move(tokenizer));
  vocabulary.source = model;
  return vocabulary;
}

// The prompt's ids, checked against --max-prompt-tokens and the model's
// position limit.
Result<std::vector<int64_t>> encode_prompt(const GenerateOptions& options,
                                           const Vocabulary& vocabulary,
                                           const std::string& text) {
  Result<std::vector<int64_t>> prompt = vocabulary.tokenizer->encode(text);
  if (!prompt.is_ok()) {
    return prompt.status().with_context(
        fmt::format("prompt for model '{}'", options.model));
  }
  if (prompt->empty()) return invalid_argument("the prompt must not be empty");
  int64_t length = static_cast<int64_t>(prompt->size());
  SEQRT_RETURN_IF_ERROR(check_prompt_length(length, options.max_prompt_tokens));
  const GenerationConfig& config = vocabulary.config;
  if (config.max_positions && length > *config.max_positions) {
    return make_error(StatusCode::kLimitExceeded,
                      "the prompt is {} tokens, more than the model's {} "
                      "positions ({})",
                      length, *config.max_positions,
                      config.max_positions_source);
  }
  return prompt;
}

// With --kv-capacity left to its default, a model whose caches have no
// fixed-capacity form (a recurrent state, an unfused attention) grows them.
Result<std::unique_ptr<Session>> create_session(const GenerateOptions& options,
                                                Graph graph,
                                                int64_t prompt_tokens,
                                                ProgressDisplay& progress) {
  SessionOptions session_options;
  session_options.kv_cache_capacity = options.kv_capacity >= 0
                                          ? options.kv_capacity
                                          : prompt_tokens + options.max_tokens;
  session_options.backend = options.backend;
  SEQRT_ASSIGN_OR_RETURN(session_options.backend_options,
                         parse_backend_option_flags(options.backend_options));
  session_options.progress = progress.callback();
  SEQRT_RETURN_IF_ERROR(
      apply_limit_flags(options.limits, session_options.limits));
  if (options.kv_capacity >= 0 || graph.state_pairs.empty()) {
    session_options.kv_cache_capacity =
        std::max<int64_t>(options.kv_capacity, 0);
    return Session::create(std::move(graph), session_options);
  }
  Result<std::unique_ptr<Session>> session =
      Session::create(graph, session_options);
  if (session.is_ok() || session.status().code() != StatusCode::kUnsupported) {
    return session;
  }
  session_options.kv_cache_capacity = 0;
  return Session::create(std::move(graph), session_options);
}

// What a decode() did: its times, and why it stopped before --max-tokens
// (empty if it did not).
struct Decoding {
  double prefill_s = 0;
  double decode_s = 0;
  int64_t steps = 0;
  std::string stopped;
};

// Prefills `prompt`, then streams up to --max-tokens tokens: the first
// comes from the prefill, each further one costs a decode run.
Result<Decoding> decode(Stream& stream, const DecoderInterface& interface,
                        Sampler& sampler, const Vocabulary& vocabulary,
                        const std::vector<int64_t>& prompt,
                        const GenerateOptions& options) {
  const GenerationConfig& config = vocabulary.config;
  Decoding decoding;
  Clock::time_point start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(auto outputs, stream.run(interface.feeds(prompt, 0)));
  decoding.prefill_s = seconds_since(start);
  SEQRT_ASSIGN_OR_RETURN(
      int64_t token,
      next_token(sampler, outputs.at(kLogitsOutput), vocabulary));
  int64_t past = static_cast<int64_t>(prompt.size());
  for (int64_t i = 0; i < options.max_tokens; ++i) {
    if (std::count(config.eos_ids.begin(), config.eos_ids.end(), token)) {
      decoding.stopped = fmt::format("end of sequence: token {} ({})", token,
                                     config.eos_source);
      break;
    }
    print_text(vocabulary.tokenizer->decode_token(token));
    if (i + 1 == options.max_tokens) break;
    if (config.max_positions && past >= *config.max_positions) {
      decoding.stopped =
          fmt::format("the model's {} positions are used up ({})",
                      *config.max_positions, config.max_positions_source);
      break;
    }
    start = Clock::now();
    SEQRT_ASSIGN_OR_RETURN(outputs, stream.run(interface.feeds({token}, past)));
    decoding.decode_s += seconds_since(start);
    ++past;
    ++decoding.steps;
    SEQRT_ASSIGN_OR_RETURN(
        token, next_token(sampler, outputs.at(kLogitsOutput), vocabulary));
  }
  return decoding;
}

Status generate(const GenerateOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(options.sampler));
  Vocabulary vocabulary;
  if (!options.tokenizer.empty()) {
    SEQRT_ASSIGN_OR_RETURN(vocabulary, load_tokenizer_json(options));
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::string text,
      prompt_text(options, vocabulary.tokenizer
                               ? vocabulary.tokenizer->max_token_bytes()
                               : kMaxUtf8Bytes));
  ProgressDisplay progress;
  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         load_model(options.model, progress.callback(),
                                    file_access(options.no_mmap)));
  if (!vocabulary.tokenizer) {
    SEQRT_ASSIGN_OR_RETURN(vocabulary,
                           metadata_tokenizer(graph, options.model));
  }
  SEQRT_ASSIGN_OR_RETURN(DecoderInterface interface,
                         find_decoder_interface(graph, options.model));
  if (interface.scored_tokens) {
    SEQRT_RETURN_IF_ERROR(
        check_scored_tokens(*interface.scored_tokens, vocabulary));
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> prompt,
                         encode_prompt(options, vocabulary, text));
  SEQRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> session,
      create_session(options, std::move(graph),
                     static_cast<int64_t>(prompt.size()), progress));
  progress.finish();
  Stream stream(*session);
  // A failed step ends the command, so the state need not survive one:
  // update the KV cache in place instead of copying it every step.
  stream.set_update_state_in_place(true);

  print_text(text);
  SEQRT_ASSIGN_OR_RETURN(
      Decoding decoding,
      decode(stream, interface, sampler, vocabulary, prompt, options));
  int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
  fmt::print(
      "\n\nprompt: {} tokens in {:.1f} ms, {:.1f} tokens/s\n"
      "decode: {} tokens in {:.1f} ms, {:.1f} tokens/s (backend '{}')\n",
      prompt_tokens, decoding.prefill_s * 1e3,
      per_second(prompt_tokens, decoding.prefill_s), decoding.steps,
      decoding.decode_s * 1e3, per_second(decoding.steps, decoding.decode_s),
      options.backend);
  if (!decoding.stopped.empty()) fmt::print("stopped: {}\n", decoding.stopped);
  return Status::ok();
}

}  // namespace

Command add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* sub = app.add_subcommand(
      "generate",
      "Generate text from a model with a character tokenizer in its "
      "metadata, or from a Hugging Face decoder export with --tokenizer, "
      "streaming it, then print prompt and decode tokens/s");
  sub->add_option("MODEL", options->model, "Model file (.seqrt or .onnx)")
      ->required();
  CLI::Option* prompt =
      sub->add_option("-p,--prompt", options->prompt, "Text to start from");
  CLI::Option* prompt_file = sub->add_option(
      "--prompt-file", options->prompt_file,
      "Read the text to start from from this file (for prompts longer than "
      "a command line may be)");
  prompt->excludes(prompt_file);
  sub->add_option("--tokenizer", options->tokenizer,
                  "A Hugging Face tokenizer.json (BPE) for a decoder export "
                  "(input_ids, KV cache); without it, the model's metadata "
                  "holds a character tokenizer");
  sub->add_flag("--ignore-eos", options->ignore_eos,
                "With --tokenizer: go on past the end-of-sequence token");
  CLI::Option_group* source = sub->add_option_group("prompt");
  source->add_options(prompt, prompt_file);
  source->require_option(1);
  sub->add_option("--max-prompt-tokens", options->max_prompt_tokens,
                  "Longest prompt accepted, in tokens; the "
                  "prompt is prefilled in one run whose memory grows with it")
      ->check(integer_in<int64_t>(1, kMaxPromptTokensCeiling))
      ->capture_default_str();
  sub->add_option("-b,--backend", options->backend,
                  fmt::format("Backend to run on ({}), or a list such as "
                              "vulkan,cpu: each node on the first that runs it",
                              fmt::join(compiled_backends(), ", ")))
      ->capture_default_str();
  sub->add_option("-n,--max-tokens", options->max_tokens,
                  "Tokens to generate (characters for a character "
                  "tokenizer); fewer at an end-of-sequence token")
      ->check(integer_in<int64_t>(1, kMaxTokens))
      ->capture_default_str();
  sub->add_option("-t,--temperature", options->sampler.temperature,
                  "Sampling temperature; 0 picks the most likely token")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("-k,--top-k", options->sampler.top_k,
                  "Sample from the K most likely tokens only (0: all)")
      ->check(integer_in<int64_t>(0, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  sub->add_option("-s,--seed", options->sampler.seed,
                  "Seed of the sampler: the same seed gives the same text")
      ->check(integer_in<uint64_t>(0, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  sub->add_option("--kv-capacity", options->kv_capacity,
                  "Tokens each KV cache holds, allocated once and written in "
                  "place (a step costs its new tokens, not a copy of the "
                  "cache); 0 grows the caches by concatenation as the graph "
                  "says; by default the prompt plus --max-tokens where the "
                  "model's caches allow it")
      ->check(integer_in<int64_t>(0, kMaxTokens + kMaxPromptTokensCeiling));
  add_no_mmap_flag(*sub, options->no_mmap);
  add_limit_flags(*sub, options->limits);
  add_backend_option_flag(*sub, options->backend_options);
  return {sub, [options] { return generate(*options); }};
}

}  // namespace seqrt
