// seqrt: the command-line tool (DESIGN.md §8). Exit code 0 on success; on
// failure exactly one line "seqrt: error: <message>" on stderr and exit code
// 1 (a failed command) or 2 (a bad command line).
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/command.h"
#include "tools/serve_forward.h"
#include "tools/sigbus_handler.h"

namespace {

constexpr int kCommandFailed = 1;
constexpr int kUsageError = 2;
constexpr const char* kCommandList =
    "expected inspect, run, convert, bench, generate, quantize or serve";

// Scripts read the first line of stderr: keep the message on one line.
// Messages quote names from untrusted files, so every control character
// (vertical tab, form feed, a terminal escape) becomes a space too.
void report_error(std::string message) {
  for (char& c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  std::fprintf(stderr, "seqrt: error: %s\n", message.c_str());
}

// CLI11 would call a misspelt command "an argument not expected".
bool is_unknown_command(const std::vector<seqrt::Command>& commands,
                        const char* word) {
  if (word[0] == '-') return false;
  for (const seqrt::Command& command : commands) {
    if (command.app->get_name() == word) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // A mapped model truncated under us is a one-line error, not a crash.
  seqrt::install_sigbus_handler();
  // No require_subcommand(): a missing command gets our message below.
  CLI::App app(
      "seqrt: inspect, run, convert, benchmark, quantize and generate with "
      "sequence models",
      "seqrt");
  app.set_version_flag("--version", "seqrt " SEQRT_VERSION);
  app.footer(
      "Run 'seqrt COMMAND --help' for a command's options; 'seqrt serve "
      "MODEL...' serves models over HTTP (the Python package seqrt.serve). "
      "Exit code 0 "
      "on success, 1 when a command fails, 2 on a bad command line.\n");
  std::vector<seqrt::Command> commands = {
      seqrt::add_inspect_command(app),  seqrt::add_run_command(app),
      seqrt::add_convert_command(app),  seqrt::add_bench_command(app),
      seqrt::add_generate_command(app), seqrt::add_quantize_command(app),
  };

  // serve is Python (seqrt.serve, on Ray Serve): it parses its own options.
  if (argc > 1 && std::string(argv[1]) == "serve") {
    return seqrt::forward_to_python_serve(argc - 1, argv + 1);
  }
  if (argc > 1 && is_unknown_command(commands, argv[1])) {
    report_error(std::string("unknown command '") + argv[1] + "'; " +
                 kCommandList);
    return kUsageError;
  }
  // CLI11 reports parse results as exceptions; they end here.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    report_error(e.what());
    return kUsageError;
  }

  for (const seqrt::Command& command : commands) {
    if (!command.app->parsed()) continue;
    seqrt::Status status;
    // Out of memory outside a Session (loading, writing) ends here too.
    try {
      status = command.run();
    } catch (const std::bad_alloc&) {
      status = seqrt::Status(seqrt::StatusCode::kOutOfMemory, "out of memory");
    }
    if (status.is_ok()) return 0;
    report_error(status.message());
    return kCommandFailed;
  }
  report_error(std::string("no command given; ") + kCommandList +
               " (see 'seqrt --help')");
  return kUsageError;
}
