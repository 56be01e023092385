// The `seqrt` commands. Each command file adds its subcommand to the app
// and returns what to do when it is chosen; main.cc parses and runs it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "graph/status.h"

namespace seqrt {

struct Command {
  CLI::App* app = nullptr;      // the subcommand, owned by the parent app
  std::function<Status()> run;  // reads the options the parse filled in
};

Command add_inspect_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_convert_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_generate_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);

}  // namespace seqrt
