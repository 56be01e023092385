#include "ops/node_state.h"

namespace seqrt {

std::unique_ptr<NodeState> NodeStateCache::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.empty()) return nullptr;
  std::unique_ptr<NodeState> state = std::move(idle_.back());
  idle_.pop_back();
  return state;
}

void NodeStateCache::give_back(std::unique_ptr<NodeState> state) {
  if (state == nullptr) return;
  std::unique_ptr<NodeState> dropped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kMaxIdle) {
    idle_.push_back(std::move(state));
  } else {
    dropped = std::move(state);
  }
}

size_t NodeStateCache::idle_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

}  // namespace seqrt
