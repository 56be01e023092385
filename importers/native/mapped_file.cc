#include "importers/native/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "graph/regular_file.h"

namespace seqrt {
namespace {

Status errno_error(const std::string& path, const char* what) {
  int code = errno;
  if (code == ENOENT) {
    return not_found("'{}': no such file", path);
  }
  return io_error("'{}': cannot {}: {}", path, what, std::strerror(code));
}

// One registry entry. `state` orders the writes: a slot is claimed
// (kFree -> kWriting), filled, then published (kListed); the signal handler
// reads only kListed slots. Fixed arrays, no allocation: the handler may
// run while another thread is inside malloc.
enum SlotState : int { kFree = 0, kWriting = 1, kListed = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  char path[kMaxMappedPathBytes] = {};
};

Slot g_slots[kMaxListedMappings];

static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<uintptr_t>::is_always_lock_free,
              "the SIGBUS handler needs lock-free atomics");

int list_mapping(const uint8_t* data, size_t size, const std::string& path) {
  for (int i = 0; i < kMaxListedMappings; ++i) {
    Slot& slot = g_slots[i];
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kWriting)) continue;
    size_t length = std::min(path.size(), kMaxMappedPathBytes - 1);
    std::memcpy(slot.path, path.data(), length);
    slot.path[length] = '\0';
    slot.begin.store(reinterpret_cast<uintptr_t>(data));
    slot.end.store(reinterpret_cast<uintptr_t>(data) + size);
    slot.state.store(kListed);
    return i;
  }
  return -1;  // full: a fault in this mapping keeps the default SIGBUS
}

void unlist_mapping(int index) {
  if (index < 0) return;
  Slot& slot = g_slots[index];
  slot.state.store(kWriting);
  slot.begin.store(0);
  slot.end.store(0);
  slot.state.store(kFree);
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(
    const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  size_t size = static_cast<size_t>(file.size());
  if (size == 0) {
    return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0, -1));
  }
  // The mapping stays valid after the descriptor closes.
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (data == MAP_FAILED) return errno_error(path, "map");
  const auto* bytes = static_cast<const uint8_t*>(data);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(bytes, size, list_mapping(bytes, size, path)));
}

MappedFile::~MappedFile() {
  // Unlisted first, so a fault can never be blamed on a reused range.
  unlist_mapping(slot_);
  if (data_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
}

const char* find_mapped_file(const void* address) {
  auto where = reinterpret_cast<uintptr_t>(address);
  for (Slot& slot : g_slots) {
    if (slot.state.load() != kListed) continue;
    if (where >= slot.begin.load() && where < slot.end.load()) {
      return slot.path;
    }
  }
  return nullptr;
}

}  // namespace seqrt
