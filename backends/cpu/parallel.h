// Threads for CPU kernels. OpenMP, because oneDNN (Debian's build) uses it
// too: both share one team and never oversubscribe the cores. A nested call
// (from inside a parallel loop, or dnnl_sgemm inside one) runs serially.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// Runs fn(i) for every i in [0, n), spread over the threads. `fn` must not
// throw; kernels validate their inputs before entering a parallel loop.
template <typename Fn>
void parallel_for(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

// The number of threads a parallel_for started here would use.
int max_threads();

// Sets the thread count for parallel loops started by the calling thread
// (0 keeps the default: one per core, or OMP_NUM_THREADS).
void set_threads_for_this_thread(int num_threads);

// Sets the calling thread's thread count for its lifetime, then restores it.
class ScopedThreads {
 public:
  explicit ScopedThreads(int num_threads);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

}  // namespace seqrt::cpu
