#include "backends/cpu/kernel_table.h"

#include <cstdio>
#include <cstdlib>

namespace seqrt::cpu {

#define SEQRT_CPU_KERNEL_FAMILY(fn) void fn(KernelTable& table);
#include "backends/cpu/kernels/kernel_list.def"
#undef SEQRT_CPU_KERNEL_FAMILY

void KernelTable::add(CpuKernel kernel) {
  auto key = std::make_pair(kernel.domain, kernel.op);
  if (!kernels_.emplace(key, std::move(kernel)).second) {
    std::fprintf(stderr, "seqrt: CPU kernel for %s::%s registered twice\n",
                 key.first.c_str(), key.second.c_str());
    std::abort();
  }
}

const CpuKernel* KernelTable::find(const std::string& domain,
                                   const std::string& op) const {
  auto it = kernels_.find({domain, op});
  return it == kernels_.end() ? nullptr : &it->second;
}

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
#define SEQRT_CPU_KERNEL_FAMILY(fn) fn(t);
#include "backends/cpu/kernels/kernel_list.def"
#undef SEQRT_CPU_KERNEL_FAMILY
    return t;
  }();
  return table;
}

}  // namespace seqrt::cpu
