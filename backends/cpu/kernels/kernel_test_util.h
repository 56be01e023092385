// Runs one op's CPU kernel and its reference kernel on the same hand-built
// node (bodies of subgraph ops run on CPU kernels and on reference kernels
// respectively, with `scope` as the values they may capture), for the tests
// of the standard-op and RungeKutta kernels.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/host/interpreter.h"
#include "ops/op_test_util.h"

namespace seqrt::cpu::kernel_testing {

using Scope = std::map<std::string, Tensor>;

inline Result<std::vector<Tensor>> run_kernel(
    bool on_cpu, const std::string& domain, const std::string& op,
    const std::vector<Tensor>& inputs, const AttrMap& attrs,
    size_t num_outputs = 1, const Scope* scope = nullptr) {
  const OpSchema* schema = OpRegistry::global().find(domain, op);
  if (schema == nullptr) return not_found("no op {}", op);
  KernelFn run = schema->reference;
  if (on_cpu) {
    const CpuKernel* kernel = kernel_table().find(domain, op);
    if (kernel == nullptr) return not_found("no CPU kernel for {}", op);
    run = kernel->run;
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
  KernelChooser choose = [on_cpu](const Node& n,
                                  const OpSchema& s) -> Result<KernelFn> {
    if (!on_cpu) return KernelFn(s.reference);
    const CpuKernel* kernel = kernel_table().find(n.domain, n.op);
    if (kernel == nullptr) return not_found("no CPU kernel for {}", n.op);
    return kernel->run;
  };
  SubgraphRunner runner = [choose, scope](const Graph& body,
                                          const std::vector<Tensor>& in) {
    return interpret_graph(body, in, choose, scope);
  };
  KernelContext ctx(node, *schema, std::move(args), runner);
  SEQRT_RETURN_IF_ERROR(run(ctx));
  return std::move(ctx.outputs());
}

inline Result<std::vector<Tensor>> run_cpu(const std::string& op,
                                           const std::vector<Tensor>& inputs,
                                           const AttrMap& attrs = {},
                                           size_t num_outputs = 1) {
  return run_kernel(true, kOnnxDomain, op, inputs, attrs, num_outputs);
}

// |got − want| <= tol·(1 + |want|) elementwise; NaNs must match.
inline void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.dims(), want.dims());
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double w = want.element_f64(i);
    double g = got.element_f64(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (w == g || std::abs(g - w) <= tol * (1 + std::abs(w))) continue;
    ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
    ++reported;
  }
}

// The CPU kernel agrees with the reference kernel on every output.
inline void expect_matches_reference(const std::string& domain,
                                     const std::string& op,
                                     const std::vector<Tensor>& inputs,
                                     const AttrMap& attrs, double tol,
                                     size_t num_outputs = 1,
                                     const Scope* scope = nullptr) {
  auto want = run_kernel(false, domain, op, inputs, attrs, num_outputs, scope);
  auto got = run_kernel(true, domain, op, inputs, attrs, num_outputs, scope);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_close((*got)[i], (*want)[i], tol);
  }
}

// Uniform values in [lo, hi) of `dtype`, deterministic in `seed`.
inline Tensor uniform(std::vector<int64_t> dims, uint64_t seed, double lo = -1,
                      double hi = 1, DType dtype = DType::kF32) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = static_cast<double>(state >> 11) / 9007199254740992.0;
    t.set_element_f64(i, lo + (hi - lo) * u);
  }
  return t;
}

}  // namespace seqrt::cpu::kernel_testing
