// Reading a cgroup CPU quota as a core count, and the default thread count
// that follows from it.
#include "backends/cpu/available_cores.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>

namespace seqrt::cpu {
namespace {

TEST(AvailableCores, ReadsCgroupV2CpuMax) {
  EXPECT_EQ(cores_of_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("100000 100000\n"), 1);
  EXPECT_EQ(cores_of_cpu_max("150000 100000\n"), 2);  // 1.5 cores: 2 threads
  EXPECT_EQ(cores_of_cpu_max("50000 100000"), 1);
  EXPECT_EQ(cores_of_cpu_max("400000 100000"), 4);
}

TEST(AvailableCores, IgnoresWhatIsNotAQuota) {
  EXPECT_EQ(cores_of_cpu_max(""), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("max"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("12x 100000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("-1 100000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("100000 0"), std::nullopt);
}

TEST(AvailableCores, DefaultThreadsStayWithinTheAllowedCpus) {
  int threads = default_threads();
  EXPECT_GE(threads, 1);
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    EXPECT_LE(threads, omp_get_num_procs());
    std::optional<int> quota = cgroup_cpu_quota_cores();
    if (quota) {
      EXPECT_LE(threads, *quota);
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
