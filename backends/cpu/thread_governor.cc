#include "backends/cpu/thread_governor.h"

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/parallel.h"

namespace seqrt::cpu {

ThreadGovernor& ThreadGovernor::process() {
  static ThreadGovernor governor;
  return governor;
}

bool ThreadGovernor::in_serial_spell(Clock::time_point now) const {
  return ticks(now) < serial_until_.load(std::memory_order_relaxed);
}

int ThreadGovernor::threads_for_run(int team, Clock::time_point now) const {
  return team > 1 && in_serial_spell(now) ? 1 : team;
}

void ThreadGovernor::record_run(int threads, bool contended,
                                Clock::time_point now) {
  // Serial runs say nothing about whether a team would stall.
  if (threads <= 1) return;
  if (!contended) {
    spell_.store(0, std::memory_order_relaxed);
    return;
  }
  const int64_t first =
      std::chrono::duration_cast<Clock::duration>(kFirstSerialSpell).count();
  const int64_t most =
      std::chrono::duration_cast<Clock::duration>(kMaxSerialSpell).count();
  int64_t spell = spell_.load(std::memory_order_relaxed);
  spell = spell == 0 ? first : std::min(most, 2 * spell);
  spell_.store(spell, std::memory_order_relaxed);
  serial_until_.store(ticks(now) + spell, std::memory_order_relaxed);
}

int64_t involuntary_switches() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
  return usage.ru_nivcsw;
}

bool adaptive_threads_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("SEQRT_ADAPTIVE_THREADS");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

namespace {
thread_local GovernedRun* current_run = nullptr;
}  // namespace

GovernedRun::GovernedRun(int team, FastestRun& fastest,
                         ThreadGovernor& governor)
    : threads_(team),
      saved_threads_(omp_get_max_threads()),
      fastest_(fastest),
      governor_(governor),
      start_(ThreadGovernor::Clock::now()),
      outer_(current_run) {
  current_run = this;
  if (team > 1 && adaptive_threads_enabled()) {
    threads_ = governor_.threads_for_run(team, start_);
    if (threads_ > 1) switches_at_start_ = involuntary_switches();
  }
  set_threads_for_this_thread(threads_);
}

GovernedRun::~GovernedRun() {
  if (switches_at_start_ >= 0) {
    int64_t took = elapsed();
    bool contended = slow(took) && involuntary_switches() > switches_at_start_;
    report(contended);
    if (!contended && took < fastest_.load(std::memory_order_relaxed)) {
      fastest_.store(took, std::memory_order_relaxed);
    }
  }
  omp_set_num_threads(saved_threads_);
  current_run = outer_;
}

int64_t GovernedRun::elapsed() const {
  return (ThreadGovernor::Clock::now() - start_).count();
}

bool GovernedRun::slow(int64_t took) const {
  int64_t fastest = fastest_.load(std::memory_order_relaxed);
  if (fastest != kNoRunYet) return took >= 2 * fastest;
  return took >= std::chrono::duration_cast<ThreadGovernor::Clock::duration>(
                     ThreadGovernor::kSlowRun)
                     .count();
}

void GovernedRun::report(bool contended) {
  governor_.record_run(threads_, contended, ThreadGovernor::Clock::now());
  switches_at_start_ = -1;
}

void GovernedRun::before_team_node() {
  GovernedRun* run = current_run;
  if (run == nullptr || run->switches_at_start_ < 0) return;
  if (!run->slow(run->elapsed())) return;
  if (involuntary_switches() <= run->switches_at_start_) return;
  run->report(/*contended=*/true);
  run->threads_ = 1;
  set_threads_for_this_thread(1);
}

}  // namespace seqrt::cpu
