// A one-line progress display on stderr for long loads, conversions and
// compiles: "[seqrt] converting weights 45% (123/274) 1.2 s". On a terminal
// it appears once a stage has lasted 0.3 s, is redrawn ten times a second by
// a small thread (so a stage without counts still shows its time), and is
// erased when done, so scripts that read stderr's one-line errors never see
// it. SEQRT_PROGRESS=always prints a line per stage and per tenth of a
// counted stage instead (logs, tests); SEQRT_PROGRESS=never hides it; by
// default it is hidden when stderr is not a terminal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "graph/progress.h"

namespace seqrt {

class ProgressDisplay {
 public:
  ProgressDisplay();
  ~ProgressDisplay() { finish(); }
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // The callback to hand to load_model / SessionOptions::progress (empty
  // when hidden); it borrows this display, which must outlive its use.
  ProgressFn callback();
  // Stops the redraws and erases the line; later updates start again.
  void finish();

 private:
  enum class Mode { kHidden, kTerminal, kLines };
  using Clock = std::chrono::steady_clock;

  void update(const std::string& stage, int64_t done, int64_t total);
  void redraw_until_finished();
  std::string line(Clock::time_point now) const;  // under mutex_

  Mode mode_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread redraw_;  // terminal mode, from the first update
  bool finishing_ = false;
  bool drawn_ = false;  // a terminal line is on screen
  std::string stage_;
  int64_t done_ = 0;
  int64_t total_ = 0;
  int64_t printed_tenth_ = -1;  // lines mode: last tenth of a counted stage
  Clock::time_point stage_start_;
};

}  // namespace seqrt
