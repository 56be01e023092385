// Keeps a busy machine from stalling the CPU backend's runs.
//
// OpenMP ends every parallel region at a barrier that waits for each thread
// of the team. When other processes keep the cores busy, a team thread that
// the scheduler has preempted stalls each region for a time slice: one GPT-2
// decode step of ~500 regions went from 1.5 ms to over 200 ms beside two
// busy loops on 2 cores. A single thread never waits on another.
//
// So each run asks the governor how many threads to use. A run that used a
// team, was slow (twice its executable's fastest clean team run, or
// kSlowRun before there is one) and had one of this process's threads
// preempted (an involuntary context switch: the sign that the cores are
// oversubscribed) makes the runs that follow use one thread for a while;
// then one run tries the team again. A preemption alone is not enough: an
// idle machine's daemons preempt a long run now and then without slowing it.
// While contention lasts the serial spell doubles (up to kMaxSerialSpell); a
// clean trial ends the spells. Idle machines see no involuntary switches and
// keep the full team.
//
// A stalled run should not have to finish on the team either: once a run
// is slow, it checks for preemption before each node that would use the
// team and turns serial at the first one. So the arrival of load, or a trial
// under load, costs about one stalled region, and idle runs (never that slow)
// never check.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace seqrt::cpu {

class ThreadGovernor {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirstSerialSpell{50};
  static constexpr std::chrono::milliseconds kMaxSerialSpell{2000};
  // What "slow" means before an executable has a clean team run to compare
  // with: a check for preemption (about a microsecond) is then negligible.
  static constexpr std::chrono::milliseconds kSlowRun{5};

  // The process's governor: contention is a property of the machine, and
  // every session's runs share the cores.
  static ThreadGovernor& process();

  // Threads for a run that would use `team`; 1 during a serial spell.
  int threads_for_run(int team, Clock::time_point now) const;
  // A run that used `threads` ended at `now`; `contended`: whether it was
  // slow and a thread of this process was switched out involuntarily.
  void record_run(int threads, bool contended, Clock::time_point now);

  bool in_serial_spell(Clock::time_point now) const;

 private:
  static int64_t ticks(Clock::time_point t) {
    return t.time_since_epoch().count();
  }

  std::atomic<int64_t> serial_until_{0};  // Clock ticks
  std::atomic<int64_t> spell_{0};         // the current spell's length, ticks
};

// Involuntary context switches of this process so far (every thread), or -1
// where the OS does not say.
int64_t involuntary_switches();

// Whether runs consult the governor: on unless SEQRT_ADAPTIVE_THREADS=0
// (a benchmark of the fixed team, or a machine known to be reserved).
bool adaptive_threads_enabled();

// The fastest uncontended team run of one executable, in Clock ticks (what
// "slow" means for its runs); shared by the threads that run it.
using FastestRun = std::atomic<int64_t>;
inline constexpr int64_t kNoRunYet = INT64_MAX;

// One run's use of the governor, on the thread that runs it: picks the
// threads when made (and sets them for the calling thread), reports the run
// when destroyed, restoring the caller's thread count.
class GovernedRun {
 public:
  GovernedRun(int team, FastestRun& fastest,
              ThreadGovernor& governor = ThreadGovernor::process());
  ~GovernedRun();
  GovernedRun(const GovernedRun&) = delete;
  GovernedRun& operator=(const GovernedRun&) = delete;

  int threads() const { return threads_; }

  // Called before a node that would use the team: once the run is slow, a
  // preemption since it began turns the rest of it serial. No-op outside a
  // governed run.
  static void before_team_node();

 private:
  int64_t elapsed() const;        // since the run began, Clock ticks
  bool slow(int64_t took) const;  // see the file comment
  void report(bool contended);

  int threads_;
  int saved_threads_;
  FastestRun& fastest_;
  ThreadGovernor& governor_;
  ThreadGovernor::Clock::time_point start_;
  int64_t switches_at_start_ = -1;  // -1: nothing to report
  GovernedRun* outer_;              // the run this one is nested in, if any
};

}  // namespace seqrt::cpu
