#include "backends/cpu/parallel.h"

#include <omp.h>

namespace seqrt::cpu {

int max_threads() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

void set_threads_for_this_thread(int num_threads) {
  if (num_threads > 0) omp_set_num_threads(num_threads);
}

ScopedThreads::ScopedThreads(int num_threads) : saved_(omp_get_max_threads()) {
  set_threads_for_this_thread(num_threads);
}

ScopedThreads::~ScopedThreads() { omp_set_num_threads(saved_); }

}  // namespace seqrt::cpu
