// The one table shape every backend keeps from (domain, op) to its kernel
// (STYLE.md rule 2): a backend's kernel struct has `domain` and `op` fields
// and whatever else that backend runs a node with. Registering an op twice
// is a build bug, so add() aborts saying which.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace seqrt {

template <typename Kernel>
class KernelTable {
 public:
  // `backend` names the backend in the duplicate message ("CPU", "Vulkan").
  explicit KernelTable(const char* backend) : backend_(backend) {}

  void add(Kernel kernel) {
    std::pair<std::string, std::string> key(kernel.domain, kernel.op);
    if (!kernels_.emplace(key, std::move(kernel)).second) {
      std::fprintf(stderr, "seqrt: %s kernel for %s::%s registered twice\n",
                   backend_, key.first.c_str(), key.second.c_str());
      std::abort();
    }
  }

  // Null when the backend has no kernel for the op.
  const Kernel* find(const std::string& domain, const std::string& op) const {
    auto it = kernels_.find({domain, op});
    return it == kernels_.end() ? nullptr : &it->second;
  }

 private:
  const char* backend_;
  std::map<std::pair<std::string, std::string>, Kernel> kernels_;
};

}  // namespace seqrt
