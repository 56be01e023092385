// seqrt generate MODEL (--prompt TEXT | --prompt-file PATH) [--backend NAME]
// [--max-tokens N] [--max-prompt-tokens N] [--temperature T] [--top-k K]
// [--seed S] [--no-mmap]: streams text from a generative
// model with a character tokenizer in its metadata (samples/demo). The
// prompt is prefilled in one run, then each token is one decode run; the
// model's state (KV cache, scan and memory state) stays in a Stream.
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
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
#include "tools/generate/prompt.h"
#include "tools/generate/sampler.h"
#include "tools/integer_flag.h"
#include "tools/limit_flags.h"
#include "tools/model_flags.h"
#include "tools/progress_display.h"

namespace seqrt {
namespace {

constexpr const char* kTokensInput = "tokens";
constexpr const char* kLogitsOutput = "logits";
constexpr int64_t kMaxTokens = 1000000;

struct GenerateOptions {
  std::string model;
  std::string prompt;
  std::string prompt_file;
  std::string backend = default_backend();
  int64_t max_tokens = 200;
  int64_t max_prompt_tokens = kDefaultMaxPromptTokens;
  bool no_mmap = false;
  SamplerOptions sampler;
  LimitFlags limits;
  std::vector<std::string> backend_options;  // --backend-option KEY=VALUE
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// generate feeds `tokens` (i64, (1, seq)) and reads `logits` (1, seq, V).
Status check_interface(const Graph& graph, const std::string& model) {
  bool has_logits = false;
  for (ValueId id : graph.outputs) {
    has_logits = has_logits || graph.value(id).name == kLogitsOutput;
  }
  ValueId tokens = graph.find_value(kTokensInput);
  bool is_input = false;
  for (ValueId id : graph.inputs) is_input = is_input || id == tokens;
  if (!is_input || !has_logits) {
    return invalid_model(
        "model '{}' is not a generative model: generate needs an input '{}' "
        "(i64, (1, seq)) and an output '{}' (1, seq, vocabulary)",
        model, kTokensInput, kLogitsOutput);
  }
  const Value& value = graph.value(tokens);
  if (value.dtype != DType::kI64 || !value.shape || value.shape->rank() != 2) {
    return invalid_model("model '{}': input '{}' must be i64 of rank 2", model,
                         kTokensInput);
  }
  return Status::ok();
}

// The token chosen from the last row of `logits` (1, seq, V).
Result<int64_t> next_token(Sampler& sampler, const Tensor& logits,
                           int64_t vocab) {
  if (logits.dtype() != DType::kF32 || logits.rank() != 3 ||
      logits.dim(0) != 1 || logits.dim(2) != vocab || logits.dim(1) < 1) {
    return invalid_model(
        "output '{}' is {} {}, expected f32 (1, seq, {}) for a vocabulary of "
        "{} characters",
        kLogitsOutput, dtype_name(logits.dtype()),
        dims_to_string(logits.dims()), vocab, vocab);
  }
  const float* last = logits.data_as<float>() + (logits.dim(1) - 1) * vocab;
  return sampler.next(last, vocab);
}

Result<std::map<std::string, Tensor>> run_tokens(
    Stream& stream, std::map<std::string, Tensor> feeds,
    const std::vector<int64_t>& ids) {
  feeds[kTokensInput] =
      Tensor::from_vector<int64_t>({1, static_cast<int64_t>(ids.size())}, ids);
  return stream.run(feeds);
}

void print_text(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

double per_second(int64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

// --prompt, or the text of --prompt-file.
Result<std::string> prompt_text(const GenerateOptions& options) {
  if (options.prompt_file.empty()) return options.prompt;
  return read_prompt_file(options.prompt_file, options.max_prompt_tokens);
}

Status generate(const GenerateOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(options.sampler));
  SEQRT_ASSIGN_OR_RETURN(std::string text, prompt_text(options));
  ProgressDisplay progress;
  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         load_model(options.model, progress.callback(),
                                    file_access(options.no_mmap)));
  SEQRT_ASSIGN_OR_RETURN(
      CharTokenizer tokenizer,
      CharTokenizer::from_metadata(graph.metadata, options.model));
  SEQRT_RETURN_IF_ERROR(check_interface(graph, options.model));
  Result<std::vector<int64_t>> prompt = tokenizer.encode(text);
  if (!prompt.is_ok()) {
    return prompt.status().with_context(
        fmt::format("prompt for model '{}'", options.model));
  }
  if (prompt->empty()) return invalid_argument("the prompt must not be empty");
  SEQRT_RETURN_IF_ERROR(check_prompt_length(
      static_cast<int64_t>(prompt->size()), options.max_prompt_tokens));

  SessionOptions session_options;
  session_options.backend = options.backend;
  SEQRT_ASSIGN_OR_RETURN(session_options.backend_options,
                         parse_backend_option_flags(options.backend_options));
  session_options.progress = progress.callback();
  SEQRT_RETURN_IF_ERROR(
      apply_limit_flags(options.limits, session_options.limits));
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(std::move(graph), session_options));
  progress.finish();
  Stream stream(*session);
  // A failed step ends the command, so the state need not survive one:
  // update the KV cache in place instead of copying it every step.
  stream.set_update_state_in_place(true);

  print_text(text);
  Clock::time_point start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(auto outputs, run_tokens(stream, {}, *prompt));
  double prefill_s = seconds_since(start);
  SEQRT_ASSIGN_OR_RETURN(
      int64_t token,
      next_token(sampler, outputs.at(kLogitsOutput), tokenizer.size()));

  // The first generated token comes from the prefill; each further one
  // costs a decode run.
  int64_t steps = 0;
  double decode_s = 0;
  for (int64_t i = 0; i < options.max_tokens; ++i) {
    print_text(tokenizer.decode_token(token));
    if (i + 1 == options.max_tokens) break;
    start = Clock::now();
    SEQRT_ASSIGN_OR_RETURN(outputs, run_tokens(stream, {}, {token}));
    decode_s += seconds_since(start);
    ++steps;
    SEQRT_ASSIGN_OR_RETURN(token, next_token(sampler, outputs.at(kLogitsOutput),
                                             tokenizer.size()));
  }
  int64_t prompt_tokens = static_cast<int64_t>(prompt->size());
  fmt::print(
      "\n\nprompt: {} tokens in {:.1f} ms, {:.1f} tokens/s\n"
      "decode: {} tokens in {:.1f} ms, {:.1f} tokens/s (backend '{}')\n",
      prompt_tokens, prefill_s * 1e3, per_second(prompt_tokens, prefill_s),
      steps, decode_s * 1e3, per_second(steps, decode_s), options.backend);
  return Status::ok();
}

}  // namespace

Command add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* sub = app.add_subcommand(
      "generate",
      "Generate text from a model with a character tokenizer in its "
      "metadata, streaming it, then print prompt and decode tokens/s");
  sub->add_option("MODEL", options->model, "Model file (.seqrt or .onnx)")
      ->required();
  CLI::Option* prompt =
      sub->add_option("-p,--prompt", options->prompt, "Text to start from");
  CLI::Option* prompt_file = sub->add_option(
      "--prompt-file", options->prompt_file,
      "Read the text to start from from this file (for prompts longer than "
      "a command line may be)");
  prompt->excludes(prompt_file);
  CLI::Option_group* source = sub->add_option_group("prompt");
  source->add_options(prompt, prompt_file);
  source->require_option(1);
  sub->add_option("--max-prompt-tokens", options->max_prompt_tokens,
                  "Longest prompt accepted, in tokens (characters); the "
                  "prompt is prefilled in one run whose memory grows with it")
      ->check(integer_in<int64_t>(1, kMaxPromptTokensCeiling))
      ->capture_default_str();
  sub->add_option("-b,--backend", options->backend,
                  fmt::format("Backend to run on ({})",
                              fmt::join(compiled_backends(), ", ")))
      ->capture_default_str();
  sub->add_option("-n,--max-tokens", options->max_tokens,
                  "Characters to generate")
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
  add_no_mmap_flag(*sub, options->no_mmap);
  add_limit_flags(*sub, options->limits);
  add_backend_option_flag(*sub, options->backend_options);
  return {sub, [options] { return generate(*options); }};
}

}  // namespace seqrt
