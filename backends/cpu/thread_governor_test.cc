// The governor's decisions over time (a fresh governor, explicit clocks):
// a preempted team run starts a serial spell, spells double while trials
// keep being preempted and stop at the cap, a clean trial ends them, and
// serial runs leave the state alone.
#include "backends/cpu/thread_governor.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <thread>

namespace seqrt::cpu {
namespace {

using std::chrono::milliseconds;
using Clock = ThreadGovernor::Clock;

const Clock::time_point kStart = Clock::time_point() + std::chrono::hours(1);

TEST(ThreadGovernor, KeepsTheTeamWhileRunsAreNotContended) {
  ThreadGovernor governor;
  for (int i = 0; i < 5; ++i) {
    Clock::time_point now = kStart + milliseconds(i);
    EXPECT_EQ(governor.threads_for_run(4, now), 4);
    governor.record_run(4, /*contended=*/false, now);
  }
}

TEST(ThreadGovernor, AContendedTeamRunStartsASerialSpell) {
  ThreadGovernor governor;
  governor.record_run(2, /*contended=*/true, kStart);
  EXPECT_EQ(governor.threads_for_run(2, kStart + milliseconds(1)), 1);
  EXPECT_EQ(governor.threads_for_run(2, kStart + milliseconds(49)), 1);
  EXPECT_EQ(governor.threads_for_run(2, kStart + milliseconds(50)), 2);
  // A team of one is never changed.
  EXPECT_EQ(governor.threads_for_run(1, kStart + milliseconds(1)), 1);
}

TEST(ThreadGovernor, SpellsDoubleWhileTrialsAreContendedUpToTheCap) {
  ThreadGovernor governor;
  Clock::time_point now = kStart;
  int64_t spell = ThreadGovernor::kFirstSerialSpell.count();
  for (int trial = 0; trial < 10; ++trial) {
    governor.record_run(2, /*contended=*/true, now);
    EXPECT_TRUE(governor.in_serial_spell(now + milliseconds(spell - 1)))
        << "trial " << trial;
    EXPECT_FALSE(governor.in_serial_spell(now + milliseconds(spell)))
        << "trial " << trial;
    now += milliseconds(spell);
    spell =
        std::min<int64_t>(2 * spell, ThreadGovernor::kMaxSerialSpell.count());
  }
  EXPECT_EQ(spell, ThreadGovernor::kMaxSerialSpell.count());
}

TEST(ThreadGovernor, ACleanTrialEndsTheDoubling) {
  ThreadGovernor governor;
  governor.record_run(2, true, kStart);
  governor.record_run(2, true, kStart + milliseconds(50));  // spell of 100 ms
  governor.record_run(2, false, kStart + milliseconds(150));
  governor.record_run(2, true, kStart + milliseconds(200));
  EXPECT_TRUE(governor.in_serial_spell(kStart + milliseconds(249)));
  EXPECT_FALSE(governor.in_serial_spell(kStart + milliseconds(250)));
}

TEST(ThreadGovernor, SerialRunsDoNotChangeTheState) {
  ThreadGovernor governor;
  governor.record_run(1, /*contended=*/true, kStart);
  EXPECT_FALSE(governor.in_serial_spell(kStart + milliseconds(1)));
}

TEST(ThreadGovernor, TheProcessCountsItsInvoluntarySwitches) {
  // Linux reports them; the count never goes down.
  int64_t before = involuntary_switches();
  ASSERT_GE(before, 0);
  EXPECT_GE(involuntary_switches(), before);
}

// Shares the calling thread's CPU with a spinning thread until the process
// has been preempted: two runnable threads on one CPU take turns.
void get_preempted() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  cpu_set_t saved;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  std::atomic<bool> stop{false};
  std::thread rival([&] {
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    while (!stop.load()) {
    }
  });
  int64_t before = involuntary_switches();
  auto give_up = Clock::now() + std::chrono::seconds(10);
  while (involuntary_switches() == before && Clock::now() < give_up) {
  }
  stop = true;
  rival.join();
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  ASSERT_GT(involuntary_switches(), before);
}

TEST(GovernedRun, SetsTheThreadsAndRestoresTheCallers) {
  omp_set_num_threads(3);
  FastestRun fastest{0};
  {
    GovernedRun run(1, fastest);
    EXPECT_EQ(run.threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
    GovernedRun::before_team_node();  // a serial run: nothing changes
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  GovernedRun::before_team_node();  // outside a run: a no-op
  EXPECT_EQ(omp_get_max_threads(), 3);
}

TEST(GovernedRun, ASlowPreemptedRunTurnsSerialAtTheNextTeamNode) {
  if (!adaptive_threads_enabled()) GTEST_SKIP() << "SEQRT_ADAPTIVE_THREADS=0";
  ThreadGovernor governor;
  omp_set_num_threads(2);
  FastestRun fastest{0};  // any time taken is "slow"
  {
    GovernedRun run(2, fastest, governor);
    ASSERT_EQ(run.threads(), 2);
    get_preempted();
    GovernedRun::before_team_node();
    EXPECT_EQ(run.threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  EXPECT_TRUE(governor.in_serial_spell(Clock::now()));
  EXPECT_EQ(fastest.load(), 0) << "a preempted run is not a clean one";
}

TEST(GovernedRun, APreemptionThatDoesNotSlowTheRunIsNotContention) {
  // No uncontended run yet: "slow" is kSlowRun, which this test does not
  // reach unless the machine stalls it that long.
  if (!adaptive_threads_enabled()) GTEST_SKIP() << "SEQRT_ADAPTIVE_THREADS=0";
  ThreadGovernor governor;
  FastestRun fastest{kNoRunYet};
  omp_set_num_threads(2);
  auto start = Clock::now();
  {
    GovernedRun run(2, fastest, governor);
    ASSERT_EQ(run.threads(), 2);
    get_preempted();
    GovernedRun::before_team_node();
    if (Clock::now() - start < ThreadGovernor::kSlowRun) {
      EXPECT_EQ(run.threads(), 2);
    }
  }
  // (A machine that stalled the test past kSlowRun may have counted it.)
  if (Clock::now() - start < ThreadGovernor::kSlowRun) {
    EXPECT_FALSE(governor.in_serial_spell(Clock::now()));
    EXPECT_LT(fastest.load(), kNoRunYet);
  }
}

TEST(GovernedRun, ACleanTeamRunSetsTheFastest) {
  if (!adaptive_threads_enabled()) GTEST_SKIP() << "SEQRT_ADAPTIVE_THREADS=0";
  FastestRun fastest{kNoRunYet};
  // Short runs are rarely preempted; a few tries make one clean (each with
  // a fresh governor, so that a preempted try's serial spell does not last).
  for (int i = 0; i < 100 && fastest.load() == kNoRunYet; ++i) {
    ThreadGovernor governor;
    GovernedRun run(2, fastest, governor);
  }
  EXPECT_LT(fastest.load(), kNoRunYet);
}

}  // namespace
}  // namespace seqrt::cpu
