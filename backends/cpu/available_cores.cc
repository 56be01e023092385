#include "backends/cpu/available_cores.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace seqrt::cpu {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::optional<int> cores_of_quota(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<int>(std::max(1LL, (quota + period - 1) / period));
}

std::optional<int> tighter(std::optional<int> a, std::optional<int> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The v2 path of this process's cgroup ("0::/user.slice/x.scope" → that path).
std::optional<std::string> own_cgroup_v2_path() {
  std::optional<std::string> text = read_text("/proc/self/cgroup");
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return std::nullopt;
}

std::optional<int> cgroup_v2_quota() {
  std::optional<std::string> path = own_cgroup_v2_path();
  if (!path) return std::nullopt;
  std::optional<int> cores;
  // A limit set on any ancestor applies too; inside a container the path is
  // "/" and the container's own limit is at the root of its mount.
  for (std::string dir = *path;;) {
    std::optional<std::string> text =
        read_text("/sys/fs/cgroup" + (dir == "/" ? "" : dir) + "/cpu.max");
    if (text) cores = tighter(cores, cores_of_cpu_max(*text));
    if (dir.empty() || dir == "/") break;
    size_t slash = dir.find_last_of('/');
    dir = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
  }
  return cores;
}

std::optional<int> cgroup_v1_quota() {
  std::optional<std::string> quota =
      read_text("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  std::optional<std::string> period =
      read_text("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  return cores_of_quota(std::atoll(quota->c_str()),
                        std::atoll(period->c_str()));
}

}  // namespace

std::optional<int> cores_of_cpu_max(const std::string& text) {
  std::istringstream fields(text);
  std::string quota;
  long long period = 0;
  if (!(fields >> quota >> period) || quota == "max") return std::nullopt;
  char* end = nullptr;
  long long value = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end != '\0') return std::nullopt;
  return cores_of_quota(value, period);
}

std::optional<int> cgroup_cpu_quota_cores() {
  return tighter(cgroup_v2_quota(), cgroup_v1_quota());
}

int default_threads() {
  static const int threads = [] {
    // An explicit OMP_NUM_THREADS is the user's choice and is kept as given
    // (its first entry: the outer team). omp_get_num_procs() counts the
    // CPUs of the affinity mask, as OpenMP's own default does.
    if (const char* given = std::getenv("OMP_NUM_THREADS")) {
      int threads = std::atoi(given);
      if (threads > 0) return threads;
    }
    int team = omp_get_num_procs();
    std::optional<int> quota = cgroup_cpu_quota_cores();
    return std::max(1, quota ? std::min(team, *quota) : team);
  }();
  return threads;
}

}  // namespace seqrt::cpu
