#include "backends/cpu/kernel_table.h"

namespace seqrt::cpu {

#define SEQRT_CPU_KERNEL_FAMILY(fn) void fn(KernelTable& table);
#include "backends/cpu/kernels/kernel_list.def"
#undef SEQRT_CPU_KERNEL_FAMILY

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t("CPU");
#define SEQRT_CPU_KERNEL_FAMILY(fn) fn(t);
#include "backends/cpu/kernels/kernel_list.def"
#undef SEQRT_CPU_KERNEL_FAMILY
    return t;
  }();
  return table;
}

}  // namespace seqrt::cpu
