#include "tools/progress_display.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace seqrt {
namespace {

constexpr auto kShowAfter = std::chrono::milliseconds(300);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

void write_stderr(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressDisplay::ProgressDisplay() {
  const char* setting = std::getenv("SEQRT_PROGRESS");
  if (setting != nullptr && std::strcmp(setting, "always") == 0) {
    mode_ = Mode::kLines;
  } else if (setting != nullptr && std::strcmp(setting, "never") == 0) {
    mode_ = Mode::kHidden;
  } else {
    mode_ = isatty(STDERR_FILENO) ? Mode::kTerminal : Mode::kHidden;
  }
}

ProgressFn ProgressDisplay::callback() {
  if (mode_ == Mode::kHidden) return {};
  return [this](const std::string& stage, int64_t done, int64_t total) {
    update(stage, done, total);
  };
}

std::string ProgressDisplay::line(Clock::time_point now) const {
  double seconds = std::chrono::duration<double>(now - stage_start_).count();
  if (total_ <= 0) return fmt::format("[seqrt] {} {:.1f} s", stage_, seconds);
  return fmt::format("[seqrt] {} {}% ({}/{}) {:.1f} s", stage_,
                     100 * done_ / total_, done_, total_, seconds);
}

void ProgressDisplay::update(const std::string& stage, int64_t done,
                             int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  Clock::time_point now = Clock::now();
  if (stage != stage_) {
    stage_ = stage;
    stage_start_ = now;
    printed_tenth_ = -1;
  }
  done_ = done;
  total_ = total;
  if (mode_ == Mode::kTerminal) {
    if (!redraw_.joinable()) {
      finishing_ = false;
      redraw_ = std::thread([this] { redraw_until_finished(); });
    }
    return;
  }
  int64_t tenth = total > 0 ? 10 * done / total : 0;
  if (tenth != printed_tenth_) {
    printed_tenth_ = tenth;
    write_stderr(line(now) + "\n");
  }
}

void ProgressDisplay::redraw_until_finished() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kRedrawEvery, [this] { return finishing_; })) {
    Clock::time_point now = Clock::now();
    if (stage_.empty() || now - stage_start_ < kShowAfter) continue;
    write_stderr("\r\033[K" + line(now));
    drawn_ = true;
  }
}

void ProgressDisplay::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
    stage_.clear();
  }
  wake_.notify_all();
  if (redraw_.joinable()) redraw_.join();
  if (drawn_) write_stderr("\r\033[K");
  drawn_ = false;
}

}  // namespace seqrt
