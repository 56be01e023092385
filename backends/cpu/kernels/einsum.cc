// CPU kernel of Einsum (numpy semantics, as ops/linalg/einsum.cc: letters
// label dims, a repeated letter in one operand walks its diagonal, letters
// missing from the output are summed, "..." broadcasts, an implicit output
// is "..." then the letters used once, sorted).
//
// A contraction of two f32/f16/bf16 operands whose labels each appear once
// per operand and are all kept or shared (matmul, batched matmul, bilinear
// forms, outer products) packs both operands as [batch, M, K] and
// [batch, K, N] and runs oneDNN's sgemm per batch. Every other equation
// (diagonals, sums of a single operand's labels, three or more operands,
// f64 and integers) runs a strided loop over the summed labels for each
// output element, outputs in parallel, accumulating in double like the
// reference.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/typed_support.h"
#include "backends/cpu/simd/gemm.h"
#include "ops/linalg/einsum.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

using Term = EinsumTerm;

// The equation resolved for the concrete operands: per-dim labels of each
// operand and of the output, and the size of every label.
struct Equation {
  std::vector<Term> inputs;
  Term output;
  std::map<int, int64_t> sizes;
};

Result<Equation> resolve(const KernelContext& ctx) {
  std::vector<size_t> ranks;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    ranks.push_back(ctx.input(k)->rank());
  }
  SEQRT_ASSIGN_OR_RETURN(EinsumLabels labels, resolve_einsum(ctx, ranks));
  Equation eq;
  eq.inputs = std::move(labels.inputs);
  eq.output = std::move(labels.output);
  for (size_t k = 0; k < eq.inputs.size(); ++k) {
    for (size_t d = 0; d < eq.inputs[k].size(); ++d) {
      int64_t size = ctx.input(k)->dim(d);
      auto [it, inserted] = eq.sizes.emplace(eq.inputs[k][d], size);
      if (!inserted && it->second == 1) it->second = size;  // broadcast
    }
  }
  return eq;
}

// Per operand, the stride of each label of `order` (summed over a repeated
// letter, which walks the diagonal; 0 where a dim of size 1 broadcasts).
std::vector<int64_t> label_strides(const Tensor& operand, const Term& labels,
                                   const std::vector<int>& order) {
  std::vector<int64_t> own = strides_of(operand.dims());
  std::vector<int64_t> out(order.size(), 0);
  for (size_t d = 0; d < labels.size(); ++d) {
    if (operand.dim(d) == 1) continue;
    size_t at =
        std::find(order.begin(), order.end(), labels[d]) - order.begin();
    out[at] += own[d];
  }
  return out;
}

// --- the general strided loop
// --------------------------------------------------

template <typename T>
void einsum_loop(const Equation& eq, const std::vector<const T*>& data,
                 const std::vector<const Tensor*>& operands, T* out) {
  std::vector<int> order = eq.output;
  for (const auto& [label, size] : eq.sizes) {
    if (std::find(order.begin(), order.end(), label) == order.end()) {
      order.push_back(label);
    }
  }
  const size_t kept = eq.output.size();
  std::vector<int64_t> sizes;
  for (int label : order) sizes.push_back(eq.sizes.at(label));
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < operands.size(); ++k) {
    strides.push_back(label_strides(*operands[k], eq.inputs[k], order));
  }
  int64_t outputs = 1, summed = 1;
  for (size_t l = 0; l < order.size(); ++l) {
    (l < kept ? outputs : summed) *= sizes[l];
  }
  parallel_chunks(
      outputs, std::max<int64_t>(1, 4096 / std::max<int64_t>(summed, 1)),
      [&](int64_t begin, int64_t end) {
        std::vector<int64_t> base(operands.size()), offset(operands.size());
        std::vector<int64_t> coords(order.size());
        for (int64_t o = begin; o < end; ++o) {
          int64_t rest = o;
          for (size_t k = 0; k < operands.size(); ++k) base[k] = 0;
          for (size_t l = kept; l-- > 0;) {
            int64_t c = rest % sizes[l];
            rest /= sizes[l];
            for (size_t k = 0; k < operands.size(); ++k)
              base[k] += c * strides[k][l];
          }
          double sum = 0.0;
          for (size_t l = kept; l < order.size(); ++l) coords[l] = 0;
          for (int64_t s = 0; s < summed; ++s) {
            double product = 1.0;
            for (size_t k = 0; k < operands.size(); ++k) {
              offset[k] = base[k];
              for (size_t l = kept; l < order.size(); ++l) {
                offset[k] += coords[l] * strides[k][l];
              }
              product *= static_cast<double>(data[k][offset[k]]);
            }
            sum += product;
            for (size_t l = order.size();
                 l-- > kept;) {  // next summed coordinate
              if (++coords[l] < sizes[l]) break;
              coords[l] = 0;
            }
          }
          out[o] = from_f64<T>(sum);
        }
      });
}

// --- the GEMM path
// -------------------------------------------------------------

// Labels of the two operands by role; empty `batch` etc. are fine.
struct GemmPlan {
  std::vector<int> batch, m, n, k;
  int64_t nb = 1, nm = 1, nn = 1, nk = 1;
};

bool labels_unique(const Term& term) {
  for (size_t i = 0; i < term.size(); ++i) {
    if (std::count(term.begin(), term.end(), term[i]) > 1) return false;
  }
  return true;
}

bool contains(const Term& term, int label) {
  return std::find(term.begin(), term.end(), label) != term.end();
}

// Whether the equation is one GEMM per batch; fills `plan` when it is.
bool plan_gemm(const Equation& eq, const std::vector<const Tensor*>& operands,
               GemmPlan& plan) {
  if (eq.inputs.size() != 2) return false;
  const Term& a = eq.inputs[0];
  const Term& b = eq.inputs[1];
  if (!labels_unique(a) || !labels_unique(b)) return false;
  for (size_t k = 0; k < 2; ++k) {  // broadcast dims of size 1: general loop
    for (size_t d = 0; d < eq.inputs[k].size(); ++d) {
      if (operands[k]->dim(d) != eq.sizes.at(eq.inputs[k][d])) return false;
    }
  }
  for (int label : a) {
    bool in_b = contains(b, label), in_out = contains(eq.output, label);
    if (!in_b && !in_out) return false;  // a sum over A alone
    int64_t size = eq.sizes.at(label);
    if (in_b && in_out) {
      plan.batch.push_back(label);
      plan.nb *= size;
    } else if (in_b) {
      plan.k.push_back(label);
      plan.nk *= size;
    } else {
      plan.m.push_back(label);
      plan.nm *= size;
    }
  }
  for (int label : b) {
    if (contains(a, label)) continue;
    if (!contains(eq.output, label)) return false;  // a sum over B alone
    plan.n.push_back(label);
    plan.nn *= eq.sizes.at(label);
  }
  return true;
}

// Copies `src` (labels `from`, contiguous) into `dst` laid out as the
// labels `to` (a permutation of `from`), in parallel.
void permute(const float* src, const Term& from, float* dst, const Term& to,
             const std::map<int, int64_t>& sizes) {
  std::vector<int64_t> dims, src_strides;
  std::vector<int64_t> from_dims;
  for (int label : from) from_dims.push_back(sizes.at(label));
  std::vector<int64_t> own = strides_of(from_dims);
  for (int label : to) {
    dims.push_back(sizes.at(label));
    src_strides.push_back(
        own[std::find(from.begin(), from.end(), label) - from.begin()]);
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  const int64_t inner = dims.empty() ? 1 : dims.back();
  const int64_t step = dims.empty() ? 0 : src_strides.back();
  if (total == 0) return;
  parallel_chunks(total / inner, std::max<int64_t>(1, 16384 / inner),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t row = begin; row < end; ++row) {
                      int64_t rest = row, offset = 0;
                      for (size_t d = dims.size() - (dims.empty() ? 0 : 1);
                           d-- > 0;) {
                        offset += (rest % dims[d]) * src_strides[d];
                        rest /= dims[d];
                      }
                      float* out = dst + row * inner;
                      for (int64_t j = 0; j < inner; ++j)
                        out[j] = src[offset + j * step];
                    }
                  });
}

Term concat(std::initializer_list<const std::vector<int>*> parts) {
  Term out;
  for (const std::vector<int>* p : parts)
    out.insert(out.end(), p->begin(), p->end());
  return out;
}

// One GEMM operand: the data and whether it is stored transposed.
struct Operand {
  const float* data;
  bool transposed;
};

// `src` as (batch, rows, cols) when its labels are already in that order
// or in (batch, cols, rows); otherwise permuted into `scratch`.
Operand as_operand(const float* src, const Term& labels, const GemmPlan& p,
                   const std::vector<int>& rows, const std::vector<int>& cols,
                   const std::map<int, int64_t>& sizes,
                   std::vector<float>& scratch, int64_t count) {
  const Term straight = concat({&p.batch, &rows, &cols});
  if (labels == straight) return Operand{src, false};
  if (labels == concat({&p.batch, &cols, &rows})) return Operand{src, true};
  scratch.resize(static_cast<size_t>(count));
  permute(src, labels, scratch.data(), straight, sizes);
  return Operand{scratch.data(), false};
}

void einsum_gemm(const Equation& eq, const GemmPlan& p, const float* a,
                 const float* b, float* out) {
  if (p.nk == 0) return;  // empty sums: `out` is zero-filled already
  std::vector<float> pa, pb, pc;
  const Operand oa = as_operand(a, eq.inputs[0], p, p.m, p.k, eq.sizes, pa,
                                p.nb * p.nm * p.nk);
  const Operand ob = as_operand(b, eq.inputs[1], p, p.k, p.n, eq.sizes, pb,
                                p.nb * p.nk * p.nn);
  const Term straight_out = concat({&p.batch, &p.m, &p.n});
  float* c = out;
  if (eq.output != straight_out) {
    pc.resize(static_cast<size_t>(p.nb * p.nm * p.nn));
    c = pc.data();
  }
  // One GEMM per batch, batches over the threads (each sgemm then runs
  // serially, as MatMul's batches do); a single batch threads inside sgemm.
  parallel_for(p.nb, [&](int64_t i) {
    sgemm(oa.transposed, ob.transposed, p.nm, p.nn, p.nk, 1.0f,
          oa.data + i * p.nm * p.nk, oa.transposed ? p.nm : p.nk,
          ob.data + i * p.nk * p.nn, ob.transposed ? p.nk : p.nn, 0.0f,
          c + i * p.nm * p.nn, p.nn);
  });
  if (c != out) permute(c, straight_out, out, eq.output, eq.sizes);
}

Status run_einsum(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(const Equation eq, resolve(ctx));
  std::vector<const Tensor*> operands;
  for (size_t k = 0; k < ctx.num_inputs(); ++k)
    operands.push_back(ctx.input(k));
  const DType dtype = operands[0]->dtype();
  if (is_f32_family(dtype)) {
    std::vector<Tensor> loaded;
    std::vector<const float*> data;
    for (const Tensor* t : operands) {
      SEQRT_ASSIGN_OR_RETURN(Tensor f, load_f32(*t));
      loaded.push_back(f);
      data.push_back(loaded.back().data_as<float>());
    }
    SEQRT_ASSIGN_OR_RETURN(Tensor out, f32_output(ctx, 0, dtype, dims));
    GemmPlan plan;
    if (out.num_elements() > 0 && plan_gemm(eq, operands, plan)) {
      einsum_gemm(eq, plan, data[0], data[1], out.mutable_data_as<float>());
    } else {
      einsum_loop<float>(eq, data, operands, out.mutable_data_as<float>());
    }
    return set_output_as(ctx, 0, out, dtype);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, dims));
  bool handled = visit_exact_numeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<const T*> data;
    for (const Tensor* t : operands) data.push_back(t->data_as<T>());
    einsum_loop<T>(eq, data, operands, out->template mutable_data_as<T>());
  });
  if (!handled) return ctx.unsupported_error("{} operands", dtype_name(dtype));
  return Status::ok();
}

}  // namespace

void register_einsum_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Einsum", run_einsum, nullptr});
}

}  // namespace seqrt::cpu
