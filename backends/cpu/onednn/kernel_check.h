// For the tests of this folder's kernels: runs an op's CPU kernel with the
// oneDNN path forced, checks that a oneDNN primitive ran (not the own
// kernel the CPU kernel falls back to) and that the result matches the
// op's reference kernel; and the other way round, that forcing the own
// path runs no primitive. Every oneDNN kernel is tested this way whether
// or not the measured selection routes to it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel_test_util.h"
#include "backends/cpu/onednn/primitive_run.h"
#include "backends/cpu/onednn/selection.h"

namespace seqrt::cpu::onednn::testing {

inline void expect_onednn_matches_reference(const std::string& op,
                                            const std::vector<Tensor>& inputs,
                                            const AttrMap& attrs, double tol,
                                            size_t num_outputs = 1) {
  ScopedPath forced(Path::kOneDnn);
  const int64_t before = execute_count();
  kernel_testing::expect_matches_reference(kOnnxDomain, op, inputs, attrs, tol,
                                           num_outputs);
  EXPECT_GT(execute_count(), before) << op << " did not run on oneDNN";
}

inline void expect_own_path_runs_no_primitive(const std::string& op,
                                              const std::vector<Tensor>& inputs,
                                              const AttrMap& attrs,
                                              double tol) {
  ScopedPath forced(Path::kOwn);
  const int64_t before = execute_count();
  kernel_testing::expect_matches_reference(kOnnxDomain, op, inputs, attrs, tol);
  EXPECT_EQ(execute_count(), before) << op << " ran a oneDNN primitive";
}

}  // namespace seqrt::cpu::onednn::testing
