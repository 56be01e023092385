// CPU kernel of Conv (N-D, grouped, dilated, strided, padded, with bias) as
// im2col + GEMM: for each batch item and group (the tasks spread over the
// threads), the input patches become a matrix [C/group · kernel, output
// positions] and W's group block multiplies it, through oneDNN's sgemm for
// f32/f16/bf16 (converted at the edges) and a vectorised row-times-matrix
// loop in double for f64. f32 1-D and 2-D convolutions go to oneDNN's
// convolution primitive where the measurement chose it
// (../onednn/selection.h), constant weights reordered once by prepare. Output
// dims and every shape error come from the op's inference.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/onednn/conv.h"
#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/packed_weights.h"
#include "backends/cpu/onednn/selection.h"
#include "backends/cpu/simd/gemm.h"
#include "ops/registry.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

struct ConvGeometry {
  std::vector<int64_t> in;   // input spatial dims
  std::vector<int64_t> out;  // output spatial dims
  std::vector<int64_t> kernel, strides, dilations, pad_begin;
  int64_t group = 1;
  int64_t kernel_size = 1;  // product of kernel
  int64_t positions = 1;    // product of out
};

std::vector<int64_t> ints_or(const OpContext& ctx, const char* name,
                             size_t count, int64_t fallback) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(count, fallback);
  return ctx.attr_ints(name);
}

// The geometry the reference uses, with the pads auto_pad implies (the
// output dims are inference's, which has checked every attribute).
ConvGeometry conv_geometry(const OpContext& ctx,
                           const std::vector<int64_t>& x_dims,
                           const std::vector<int64_t>& w_dims,
                           const std::vector<int64_t>& dims) {
  ConvGeometry g;
  const size_t n = x_dims.size() - 2;
  g.in.assign(x_dims.begin() + 2, x_dims.end());
  g.out.assign(dims.begin() + 2, dims.end());
  g.kernel.assign(w_dims.begin() + 2, w_dims.end());
  g.strides = ints_or(ctx, "strides", n, 1);
  g.dilations = ints_or(ctx, "dilations", n, 1);
  std::vector<int64_t> pads = ints_or(ctx, "pads", 2 * n, 0);
  g.pad_begin.assign(pads.begin(), pads.begin() + n);
  g.group = ctx.attr_int("group");
  const std::string& auto_pad = ctx.attr_string("auto_pad");
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(
          0, (g.out[i] - 1) * g.strides[i] + extent - g.in[i]);
      int64_t small = total / 2;
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = 0;
    }
    g.kernel_size *= g.kernel[i];
    g.positions *= g.out[i];
  }
  return g;
}

// Row r = (channel c, kernel offset) of the patch matrix of one input image
// `x` (channels × spatial): the input value each output position reads.
template <typename T>
void im2col_row(const ConvGeometry& g, const T* x, int64_t r, T* row) {
  const size_t n = g.kernel.size();
  const int64_t c = r / g.kernel_size;
  int64_t rest = r % g.kernel_size;
  std::vector<int64_t> k(n), pos(n, 0);
  for (size_t i = n; i-- > 0;) {
    k[i] = rest % g.kernel[i];
    rest /= g.kernel[i];
  }
  int64_t image = 1;
  for (int64_t d : g.in) image *= d;
  const T* channel = x + c * image;
  const int64_t inner = g.out[n - 1];
  for (int64_t p = 0; p < g.positions; p += inner) {
    // Offset of the outer coordinates; -1 when one is in the padding.
    int64_t base = 0;
    for (size_t i = 0; i + 1 < n && base >= 0; ++i) {
      int64_t at =
          pos[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
      base = at < 0 || at >= g.in[i] ? -1 : base * g.in[i] + at;
    }
    const size_t l = n - 1;
    const int64_t start = k[l] * g.dilations[l] - g.pad_begin[l];
    for (int64_t j = 0; j < inner; ++j) {
      int64_t at = j * g.strides[l] + start;
      bool inside = base >= 0 && at >= 0 && at < g.in[l];
      row[p + j] = inside ? channel[base * g.in[l] + at] : T(0);
    }
    for (size_t i = n - 1; i-- > 0;) {  // next outer output coordinate
      if (++pos[i] < g.out[i]) break;
      pos[i] = 0;
    }
  }
}

// C[m, p] = Σ_k A[m, k] · B[k, p] in double, rows in parallel.
void gemm_f64(int64_t m, int64_t p, int64_t k, const double* a, const double* b,
              double* c) {
  parallel_for(m, [&](int64_t i) {
    double* out = c + i * p;
    for (int64_t j = 0; j < p; ++j) out[j] = 0.0;
    for (int64_t q = 0; q < k; ++q) {
      const double coef = a[i * k + q];
      const double* row = b + q * p;
      for (int64_t j = 0; j < p; ++j) out[j] += coef * row[j];
    }
  });
}

template <typename T>
void conv_typed(const ConvGeometry& g, const T* x, const T* w, const T* bias,
                int64_t batch, int64_t channels, int64_t outputs, T* y) {
  const int64_t cg = channels / g.group;
  const int64_t mg = outputs / g.group;
  const int64_t rows = cg * g.kernel_size;
  int64_t image = 1;
  for (int64_t d : g.in) image *= d;
  // One task per (batch item, group); inside a task the im2col rows and the
  // sgemm run in parallel only when it is the sole task (nested parallel
  // loops run serially), so many small groups do not oversubscribe.
  parallel_for(batch * g.group, [&](int64_t task) {
    const int64_t n = task / g.group, grp = task % g.group;
    std::vector<T> col(static_cast<size_t>(rows * g.positions));
    const T* xg = x + (n * channels + grp * cg) * image;
    parallel_chunks(
        rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(g.positions, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            im2col_row(g, xg, r, col.data() + r * g.positions);
          }
        });
    const T* wg = w + grp * mg * rows;
    T* yg = y + (n * outputs + grp * mg) * g.positions;
    if constexpr (std::is_same_v<T, float>) {
      sgemm(false, false, mg, g.positions, rows, 1.0f, wg, rows, col.data(),
            g.positions, 0.0f, yg, g.positions);
    } else {
      gemm_f64(mg, g.positions, rows, wg, col.data(), yg);
    }
  });
  if (bias == nullptr) return;
  parallel_for(batch * outputs, [&](int64_t i) {
    T* out = y + i * g.positions;
    const T b = bias[i % outputs];
    for (int64_t p = 0; p < g.positions; ++p) out[p] += b;
  });
}

// The oneDNN problem of a 1-D or 2-D convolution of `g`; nullopt for one
// oneDNN cannot express (other ranks, a pad that would have to be
// negative at the end).
std::optional<onednn::ConvProblem> conv_problem(
    const ConvGeometry& g, const std::vector<int64_t>& x_dims,
    const std::vector<int64_t>& w_dims, const std::vector<int64_t>& dims,
    bool bias, bool packed) {
  if (x_dims.size() != 3 && x_dims.size() != 4) return std::nullopt;
  onednn::ConvProblem p;
  p.src_dims = x_dims;
  p.weights_dims = w_dims;
  p.dst_dims = dims;
  p.group = g.group;
  p.strides = g.strides;
  p.dilations = g.dilations;
  p.pad_begin = g.pad_begin;
  p.bias = bias;
  p.packed_weights = packed;
  for (size_t i = 0; i < g.in.size(); ++i) {
    // The end pad that makes oneDNN's output size exactly inference's.
    int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t end =
        (g.out[i] - 1) * g.strides[i] + extent - g.in[i] - g.pad_begin[i];
    if (end < 0 || g.pad_begin[i] < 0) return std::nullopt;
    p.pad_end.push_back(end);
  }
  for (int64_t d : x_dims) {
    if (d == 0) return std::nullopt;
  }
  return p;
}

// An f32 convolution on oneDNN's primitive, when the measurement chose it;
// `packed` holds constant weights reordered by prepare_conv (null: W is
// read as it is). False: the own kernel runs the node.
Result<bool> run_onednn_conv(KernelContext& ctx, const ConvGeometry& g,
                             const std::vector<int64_t>& dims,
                             onednn::PackedWeights* packed) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor* b = ctx.input(2);
  if (x.dtype() != DType::kF32 || w.dtype() != DType::kF32 ||
      (b && b->dtype() != DType::kF32)) {
    return false;
  }
  std::optional<onednn::ConvProblem> problem = conv_problem(
      g, x.dims(), w.dims(), dims, b != nullptr, packed != nullptr);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (!problem || !onednn::use_onednn(onednn::OpClass::kConv, count)) {
    return false;
  }
  const std::string& label = ctx.node().label();
  SEQRT_ASSIGN_OR_RETURN(auto primitive,
                         onednn::conv_primitive(*problem, label));
  if (!primitive->available()) return false;
  dnnl::memory weights;
  if (packed != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(weights,
                           packed->in_layout(primitive->weights, label));
  } else {
    SEQRT_RETURN_IF_ERROR(onednn::guarded(label, "wrap the weights", [&] {
      weights = onednn::wrap(primitive->weights, w.data_as<float>());
    }));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x.dtype(), dims));
  SEQRT_RETURN_IF_ERROR(onednn::execute_conv(
      *primitive, label, x.data_as<float>(), weights,
      b ? b->data_as<float>() : nullptr, y.mutable_data_as<float>()));
  return true;
}

Status run_conv_with(KernelContext& ctx, onednn::PackedWeights* packed) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor* b = ctx.input(2);
  const ConvGeometry g = conv_geometry(ctx, x.dims(), w.dims(), dims);
  SEQRT_ASSIGN_OR_RETURN(bool ran, run_onednn_conv(ctx, g, dims, packed));
  if (ran) return Status::ok();
  const int64_t batch = x.dim(0), channels = x.dim(1), outputs = w.dim(0);
  if (x.dtype() == DType::kF64) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), dims));
    if (y->num_elements() == 0) return Status::ok();
    conv_typed<double>(g, x.data_as<double>(), w.data_as<double>(),
                       b ? b->data_as<double>() : nullptr, batch, channels,
                       outputs, y->mutable_data_as<double>());
    return Status::ok();
  }
  if (!is_f32_family(x.dtype())) {
    return ctx.unsupported_error("{} input", dtype_name(x.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor xf, load_f32(x));
  SEQRT_ASSIGN_OR_RETURN(Tensor wf, load_f32(w));
  Tensor bf;
  if (b) {
    SEQRT_ASSIGN_OR_RETURN(bf, load_f32(*b));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x.dtype(), dims));
  if (y.num_elements() > 0) {
    conv_typed<float>(g, xf.data_as<float>(), wf.data_as<float>(),
                      b ? bf.data_as<float>() : nullptr, batch, channels,
                      outputs, y.mutable_data_as<float>());
  }
  return set_output_as(ctx, 0, y, x.dtype());
}

Status run_conv(KernelContext& ctx) { return run_conv_with(ctx, nullptr); }

// Fixed dims of `value`, or nullopt when its shape is unknown or symbolic.
std::optional<std::vector<int64_t>> fixed_dims(const Graph& graph,
                                               ValueId value) {
  const std::optional<Shape>& shape = graph.value(value).shape;
  if (!shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape->rank(); ++i) {
    if (!(*shape)[i].is_fixed()) return std::nullopt;
    dims.push_back((*shape)[i].value());
  }
  return dims;
}

// A constant f32 W of a 1-D or 2-D Conv: reordered here, once, into the
// layout the primitive for the graph's shapes asks for (when the shapes
// are symbolic, by the first run, once per layout). Other nodes keep
// run_conv.
Result<KernelFn> prepare_conv(const Graph& graph, const Node& node) {
  const Tensor* w = graph.constant(node.inputs[1]);
  if (w == nullptr || w->dtype() != DType::kF32 ||
      (w->rank() != 3 && w->rank() != 4) || w->num_elements() == 0) {
    return KernelFn(run_conv);
  }
  const OpSchema* schema = OpRegistry::global().find(node.domain, node.op);
  if (schema == nullptr) return KernelFn(run_conv);
  OpContext octx(node, *schema);
  onednn::ConvProblem shape_free;
  shape_free.weights_dims = w->dims();
  shape_free.group = octx.attr_int("group");
  if (shape_free.group <= 0 || w->dim(0) % shape_free.group != 0) {
    return KernelFn(run_conv);  // inference reports it at run time
  }
  std::shared_ptr<onednn::PackedWeights> packed;
  SEQRT_RETURN_IF_ERROR(
      onednn::guarded(node.label(), "describe the weights", [&] {
        packed = std::make_shared<onednn::PackedWeights>(
            *w, onednn::f32_desc(onednn::conv_weights_dims(shape_free)));
      }));
  std::optional<std::vector<int64_t>> x_dims =
      fixed_dims(graph, node.inputs[0]);
  std::optional<std::vector<int64_t>> y_dims =
      fixed_dims(graph, node.outputs[0]);
  int64_t count = 1;
  for (int64_t d : y_dims.value_or(std::vector<int64_t>{})) count *= d;
  if (x_dims && y_dims && x_dims->size() == w->rank() &&
      onednn::use_onednn(onednn::OpClass::kConv, count)) {
    ConvGeometry g = conv_geometry(octx, *x_dims, w->dims(), *y_dims);
    std::optional<onednn::ConvProblem> problem = conv_problem(
        g, *x_dims, w->dims(), *y_dims,
        node.inputs.size() > 2 && node.inputs[2] != kNoValue, true);
    if (problem) {
      SEQRT_ASSIGN_OR_RETURN(auto primitive,
                             onednn::conv_primitive(*problem, node.label()));
      if (primitive->available()) {
        SEQRT_RETURN_IF_ERROR(
            packed->in_layout(primitive->weights, node.label()).status());
      }
    }
  }
  return KernelFn([packed](KernelContext& ctx) {
    return run_conv_with(ctx, packed.get());
  });
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Conv", run_conv, nullptr, prepare_conv});
}

}  // namespace seqrt::cpu
