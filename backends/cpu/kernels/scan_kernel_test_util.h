// Runs a CPU kernel of the state-space ops directly on a hand-built node,
// next to the reference kernel (ops/sequence/scan_test_util.h).
#pragma once

#include "backends/cpu/kernel_table.h"
#include "ops/sequence/scan_test_util.h"

namespace seqrt::cpu::scan_kernel_testing {

inline Result<std::vector<Tensor>> run_cpu(const std::string& domain,
                                           const std::string& op,
                                           const std::vector<Tensor>& inputs,
                                           const AttrMap& attrs = {},
                                           size_t num_outputs = 2) {
  const OpSchema* schema = OpRegistry::global().find(domain, op);
  const CpuKernel* kernel = kernel_table().find(domain, op);
  if (schema == nullptr || kernel == nullptr) {
    return not_found("no CPU kernel for {}", op);
  }
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node = op_testing::make_node(op, attrs, present, num_outputs);
  node.domain = domain;
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(kernel->run(ctx));
  return std::move(ctx.outputs());
}

// CPU and reference results of the same call must agree within `tol`.
inline void expect_cpu_matches_reference(const std::string& domain,
                                         const std::string& op,
                                         const std::vector<Tensor>& inputs,
                                         const AttrMap& attrs, double tol) {
  auto want = scan_testing::run_op(domain, op, inputs, attrs);
  auto got = run_cpu(domain, op, inputs, attrs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*got)[i].dtype(), (*want)[i].dtype()) << "output " << i;
    scan_testing::expect_close((*got)[i], (*want)[i], tol,
                               "output " + std::to_string(i));
  }
}

}  // namespace seqrt::cpu::scan_kernel_testing
