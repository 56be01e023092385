// How far a long step (an import, a conversion, a compile) has come, for a
// progress display. `total` is 0 for a stage without counts; a counted
// stage reports done = 1..total. Called on the thread doing the work; a
// callback must be cheap (a display throttles itself).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace seqrt {

using ProgressFn =
    std::function<void(const std::string& stage, int64_t done, int64_t total)>;

inline void report_progress(const ProgressFn& progress,
                            const std::string& stage, int64_t done = 0,
                            int64_t total = 0) {
  if (progress) progress(stage, done, total);
}

}  // namespace seqrt
