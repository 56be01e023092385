#include "backends/cpu/parallel.h"

#include <omp.h>

namespace seqrt::cpu {

int max_threads() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

void set_threads_for_this_thread(int num_threads) {
  if (num_threads > 0) omp_set_num_threads(num_threads);
}

}  // namespace seqrt::cpu
