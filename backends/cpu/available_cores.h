// How many cores this process may really use: the CPUs its affinity mask
// allows, capped by a cgroup CPU quota (a container started with `--cpus 1.5`
// may run 1.5 cores' worth of time, but OpenMP sees every core of the host
// and would start a thread on each, which then wait on one another).
#pragma once

#include <optional>
#include <string>

namespace seqrt::cpu {

// The threads a run uses when neither the caller nor OMP_NUM_THREADS says:
// the affinity count, capped by the quota, at least 1. Computed once.
int default_threads();

// The CPU quota of a cgroup v2 `cpu.max` text ("max 100000" or
// "150000 100000") as a core count rounded up; nullopt when unlimited or
// not readable. Exposed for tests.
std::optional<int> cores_of_cpu_max(const std::string& text);

// The tightest quota along the cgroup path of this process (v2, walking from
// its own cgroup up to the root of the mounted hierarchy, or v1's
// cpu.cfs_quota_us / cpu.cfs_period_us); nullopt when none applies.
std::optional<int> cgroup_cpu_quota_cores();

}  // namespace seqrt::cpu
