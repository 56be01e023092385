#include "graph/alloc_fault.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace seqrt {
namespace {

// Allocations left before the failing one; <= 0 when disarmed.
std::atomic<int64_t>& countdown() {
  static std::atomic<int64_t> left = [] {
    const char* text = std::getenv("SEQRT_TEST_FAIL_ALLOC");
    if (text == nullptr || *text == '\0') return int64_t{0};
    char* end = nullptr;
    errno = 0;
    const long long nth = std::strtoll(text, &end, 10);
    // A malformed value leaves the hook off rather than failing at random.
    if (errno != 0 || *end != '\0' || nth < 0) return int64_t{0};
    return static_cast<int64_t>(nth);
  }();
  return left;
}

}  // namespace

void fail_host_allocation(int64_t nth) { countdown().store(nth < 0 ? 0 : nth); }

bool host_allocation_fails() {
  std::atomic<int64_t>& left = countdown();
  // Cheap when disarmed, the common case: one relaxed load.
  if (left.load(std::memory_order_relaxed) <= 0) return false;
  return left.fetch_sub(1) == 1;
}

}  // namespace seqrt
