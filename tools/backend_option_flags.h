// --backend-option KEY=VALUE, repeatable, shared by the commands that open a
// backend (run, bench, generate, inspect --plan --backend): what the backend
// is opened with (backends/backend_options.h), e.g. device=1,
// fp16_weights=1, forms=chunked.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/backend_options.h"
#include "runtime/backend_registry.h"

namespace seqrt {

// Adds the flag to `command`; what it gets is written to `given`, which
// must outlive the parse. Returns the option (for ->needs()).
inline CLI::Option* add_backend_option_flag(CLI::App& command,
                                            std::vector<std::string>& given) {
  return command
      .add_option("--backend-option", given,
                  "An option of the backend as KEY=VALUE, e.g. device=1, "
                  "fp16_weights=1 or forms=chunked (vulkan); repeat for "
                  "each; with a list such as vulkan,cpu, KEY goes to the "
                  "first backend and BACKEND.KEY (cpu.device=0) to the one "
                  "named. The backend's environment variables override them "
                  "(backends/README.md)")
      ->allow_extra_args(false);
}

// The options the flags give; an error names the flag's text and what was
// expected (KEY=VALUE, a key some backend takes, a valid value).
inline Result<BackendOptions> parse_backend_option_flags(
    const std::vector<std::string>& given) {
  BackendOptions options;
  for (const std::string& text : given) {
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      return invalid_argument("--backend-option '{}': expected KEY=VALUE",
                              text);
    }
    Status status = set_backend_option(options, text.substr(0, equals),
                                       text.substr(equals + 1));
    if (!status.is_ok()) {
      return status.with_context(fmt::format("--backend-option '{}'", text));
    }
  }
  return options;
}

}  // namespace seqrt
