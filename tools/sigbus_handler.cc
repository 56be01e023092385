#include "tools/sigbus_handler.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "importers/native/mapped_file.h"

namespace seqrt {
namespace {

constexpr const char kPrefix[] = "seqrt: error: model file '";
constexpr const char kSuffix[] =
    "' changed or was truncated while in use; keep a model file unchanged "
    "while it is loaded (replace it by renaming) or pass --no-mmap\n";
constexpr int kCommandFailed = 1;

// Only async-signal-safe calls: strlen, memcpy, write, _exit, sigaction.
void on_sigbus(int signal, siginfo_t* info, void* /*context*/) {
  const char* path =
      info != nullptr ? find_mapped_file(info->si_addr) : nullptr;
  if (path == nullptr) {
    // Not ours: the default action, at once for a sent signal (it stays
    // pending until this handler returns) or on the retried access.
    struct sigaction fallback = {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, nullptr);
    raise(signal);
    return;
  }
  char message[sizeof(kPrefix) + kMaxMappedPathBytes + sizeof(kSuffix)];
  size_t length = 0;
  auto append = [&](const char* text, size_t count) {
    std::memcpy(message + length, text, count);
    length += count;
  };
  append(kPrefix, sizeof(kPrefix) - 1);
  size_t path_start = length;
  append(path, std::strlen(path));
  // One line, as main.cc's report_error makes it.
  for (size_t i = path_start; i < length; ++i) {
    unsigned char c = static_cast<unsigned char>(message[i]);
    if (c < 0x20 || c == 0x7f) message[i] = ' ';
  }
  append(kSuffix, sizeof(kSuffix) - 1);
  size_t written = 0;
  while (written < length) {
    ssize_t n = ::write(STDERR_FILENO, message + written, length - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  _exit(kCommandFailed);
}

}  // namespace

void install_sigbus_handler() {
  struct sigaction action = {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

}  // namespace seqrt
