// Test helpers for the chunked sequence kernels (Retention,
// LinearAttention): run an op's reference kernel or a CPU kernel function on
// a hand-built node, random inputs, and a tolerance check scaled to the
// output's magnitude.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/registry.h"

namespace seqrt::cpu::testing {

using KernelCall = std::function<Status(KernelContext&)>;

// Runs `kernel` (null: the op's reference kernel) on a node of `op` with
// `inputs` (empty tensors are omitted optional inputs) and two outputs.
inline Result<std::vector<Tensor>> run_kernel(const std::string& domain,
                                              const std::string& op,
                                              const std::vector<Tensor>& inputs,
                                              const AttrMap& attrs,
                                              const KernelCall& kernel) {
  const OpSchema* schema = OpRegistry::global().find(domain, op);
  if (schema == nullptr) return invalid_argument("{} not registered", op);
  Node node;
  node.name = "test";
  node.op = op;
  node.domain = domain;
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool present = !inputs[i].empty();
    node.inputs.push_back(present ? static_cast<ValueId>(i) : kNoValue);
    args.push_back(present ? &inputs[i] : nullptr);
  }
  node.outputs = {static_cast<ValueId>(inputs.size()),
                  static_cast<ValueId>(inputs.size() + 1)};
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(kernel ? kernel(ctx) : schema->reference(ctx));
  return std::move(ctx.outputs());
}

// Uniform values in [lo, hi) from a fixed seed.
inline Tensor random(DType dtype, std::vector<int64_t> dims, uint64_t seed,
                     double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double u = static_cast<double>(x >> 11) / static_cast<double>(1ull << 53);
    t.set_element_f64(i, lo + (hi - lo) * u);
  }
  return t;
}

// Every element within rel · max|want| (+ a tiny floor) and finite.
inline void expect_close(const Tensor& got, const Tensor& want, double rel,
                         const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  double peak = 0.0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    peak = std::max(peak, std::abs(want.element_f64(i)));
  }
  double tolerance = rel * peak + 1e-6;
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double g = got.element_f64(i), w = want.element_f64(i);
    if (!std::isfinite(g) || std::abs(g - w) > tolerance) {
      ADD_FAILURE() << what << ": element " << i << " got " << g << ", want "
                    << w << " (tolerance " << tolerance << ")";
      ++reported;
    }
  }
}

// Rows [begin, end) of axis `axis` of a tensor, as a new tensor.
inline Tensor slice_axis(const Tensor& t, size_t axis, int64_t begin,
                         int64_t end) {
  std::vector<int64_t> dims = t.dims();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  int64_t n = dims[axis];
  dims[axis] = end - begin;
  Tensor out = Tensor::allocate(t.dtype(), dims).value();
  int64_t o = 0;
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c = 0; c < inner; ++c) {
        out.set_element_f64(o++, t.element_f64((a * n + r) * inner + c));
      }
    }
  }
  return out;
}

// Concatenation of two tensors along `axis` (other dims equal).
inline Tensor concat_axis(const Tensor& a, const Tensor& b, size_t axis) {
  std::vector<int64_t> dims = a.dims();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  int64_t na = a.dim(axis), nb = b.dim(axis);
  dims[axis] = na + nb;
  Tensor out = Tensor::allocate(a.dtype(), dims).value();
  int64_t o = 0;
  for (int64_t x = 0; x < outer; ++x) {
    for (int64_t r = 0; r < na * inner; ++r) {
      out.set_element_f64(o++, a.element_f64(x * na * inner + r));
    }
    for (int64_t r = 0; r < nb * inner; ++r) {
      out.set_element_f64(o++, b.element_f64(x * nb * inner + r));
    }
  }
  return out;
}

}  // namespace seqrt::cpu::testing
