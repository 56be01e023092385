// Conv: N-D convolution (1-D and 2-D in practice) of X (N, C, D1, ...) with
// W (M, C/group, k1, ...) plus optional bias B (M). Attributes as in ONNX:
// auto_pad (NOTSET uses `pads`; SAME_UPPER/SAME_LOWER pad so that
// out = ceil(in / stride), the odd pad at the end/beginning; VALID: none),
// dilations, group, kernel_shape, pads (begins, then ends), strides.
#include <algorithm>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// Per spatial axis: kernel size, stride, dilation and explicit pads.
struct Geometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
};

Result<std::vector<int64_t>> per_axis(const OpContext& ctx, const char* name,
                                      size_t count, int64_t fallback,
                                      int64_t minimum) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(count, fallback);
  const std::vector<int64_t>& values = ctx.attr_ints(name);
  if (values.size() != count) {
    return ctx.error("{} {} must have {} entries", name, dims_to_string(values),
                     count);
  }
  for (int64_t value : values) {
    if (value < minimum || value > kMaxElements) {
      return ctx.error("{} {} must hold values >= {}", name,
                       dims_to_string(values), minimum);
    }
  }
  return values;
}

// `w_kernel` are W's spatial dims (nullopt where not fixed).
Result<Geometry> geometry(const OpContext& ctx,
                          const std::vector<std::optional<int64_t>>& w_kernel) {
  size_t n = w_kernel.size();
  Geometry g;
  SEQRT_ASSIGN_OR_RETURN(g.strides, per_axis(ctx, "strides", n, 1, 1));
  SEQRT_ASSIGN_OR_RETURN(g.dilations, per_axis(ctx, "dilations", n, 1, 1));
  SEQRT_ASSIGN_OR_RETURN(auto pads, per_axis(ctx, "pads", 2 * n, 0, 0));
  g.pad_begin.assign(pads.begin(), pads.begin() + n);
  g.pad_end.assign(pads.begin() + n, pads.end());
  SEQRT_ASSIGN_OR_RETURN(g.kernel, per_axis(ctx, "kernel_shape", n, -1, 1));
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.has_attr("kernel_shape")) g.kernel[i] = w_kernel[i].value_or(-1);
    if (w_kernel[i] && g.kernel[i] != *w_kernel[i]) {
      return ctx.error("kernel_shape {} does not match W's spatial dims",
                       dims_to_string(g.kernel));
    }
    if (g.kernel[i] == 0) return ctx.error("W has an empty kernel dim");
    // The dilated kernel extent must stay far from int64 overflow.
    if (g.kernel[i] > 1 && g.dilations[i] > kMaxElements / (g.kernel[i] - 1)) {
      return ctx.error("kernel {} dilated by {} is too large",
                       dims_to_string(g.kernel), dims_to_string(g.dilations));
    }
  }
  return g;
}

// Output size of spatial axis i for input size `in`; fills in the pads
// that auto_pad implies.
Result<int64_t> output_size(const OpContext& ctx, Geometry& g, size_t i,
                            int64_t in) {
  const std::string& auto_pad = ctx.attr_string("auto_pad");
  int64_t stride = g.strides[i];
  int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
    int64_t small = total / 2;
    bool upper = auto_pad == "SAME_UPPER";
    g.pad_begin[i] = upper ? small : total - small;
    g.pad_end[i] = upper ? total - small : small;
    return out;
  }
  if (auto_pad == "VALID") g.pad_begin[i] = g.pad_end[i] = 0;
  int64_t padded = in + g.pad_begin[i] + g.pad_end[i];
  if (padded < extent) {
    return ctx.error(
        "spatial axis {} of size {} (padded {}) is smaller than the dilated "
        "kernel ({})",
        i, in, padded, extent);
  }
  return (padded - extent) / stride + 1;
}

// A symbolic input size survives where the output size equals the input's.
Dim symbolic_output(const OpContext& ctx, const Geometry& g, size_t i,
                    const Dim& in) {
  const std::string& auto_pad = ctx.attr_string("auto_pad");
  if (g.strides[i] != 1 || g.kernel[i] < 0) return Dim::unknown();
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return in;
  int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
  int64_t pads = auto_pad == "VALID" ? 0 : g.pad_begin[i] + g.pad_end[i];
  return pads == extent - 1 ? in : Dim::unknown();
}

Status check_dtypes(const OpContext& ctx, DType x, DType w, DType b) {
  if (!is_float(x) || w != x || (b != DType::kUndefined && b != x)) {
    return ctx.error("X, W and B must share one float dtype, got {}, {}, {}",
                     dtype_name(x), dtype_name(w), dtype_name(b));
  }
  return Status::ok();
}

// Checks ranks and channel counts; returns the output's (N, M) dims.
Result<std::vector<Dim>> check_shapes(const OpContext& ctx, const Shape& x,
                                      const Shape& w,
                                      const std::optional<Shape>& b) {
  int64_t group = ctx.attr_int("group");
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return ctx.error(
        "X must be (N,C,D1,...) and W (M,C/group,k1,...) of the same rank, got "
        "{} and {}",
        x.to_string(), w.to_string());
  }
  if (group < 1) return ctx.error("group must be >= 1, got {}", group);
  const Dim& c = x[1];
  const Dim& m = w[0];
  bool channels_fit =
      !c.is_fixed() || !w[1].is_fixed() ||
      (c.value() % group == 0 && c.value() / group == w[1].value());
  if (!channels_fit || (m.is_fixed() && m.value() % group != 0)) {
    return ctx.error(
        "X {} and W {} do not fit group={}: need C = W[1] * group and M "
        "divisible by group",
        x.to_string(), w.to_string(), group);
  }
  if (b && (b->rank() != 1 ||
            (m.is_fixed() && (*b)[0].is_fixed() && (*b)[0] != m))) {
    return ctx.error("B must be ({}), got {}", m.to_string(), b->to_string());
  }
  return std::vector<Dim>{x[0], m};
}

std::vector<std::optional<int64_t>> kernel_dims(const Shape& w) {
  std::vector<std::optional<int64_t>> out;
  for (size_t d = 2; d < w.rank(); ++d) {
    out.push_back(w[d].is_fixed() ? std::optional<int64_t>(w[d].value())
                                  : std::nullopt);
  }
  return out;
}

Status infer_conv(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  DType b_dtype = ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined;
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtype, ctx.input_dtype(1), b_dtype));
  const std::optional<Shape>& x = ctx.input_shape(0);
  const std::optional<Shape>& w = ctx.input_shape(1);
  if (!x || !w) {
    std::optional<Shape> out;
    if (x || w) out = unknown_shape(x ? x->rank() : w->rank());
    ctx.set_output(0, dtype, out);
    return Status::ok();
  }
  std::optional<Shape> b;
  if (ctx.has_input(2)) b = ctx.input_shape(2);
  SEQRT_ASSIGN_OR_RETURN(std::vector<Dim> out, check_shapes(ctx, *x, *w, b));
  SEQRT_ASSIGN_OR_RETURN(Geometry g, geometry(ctx, kernel_dims(*w)));
  for (size_t i = 0; i + 2 < x->rank(); ++i) {
    const Dim& in = (*x)[i + 2];
    SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, in));
    if (in.is_fixed() && g.kernel[i] > 0) {
      SEQRT_ASSIGN_OR_RETURN(int64_t size, output_size(ctx, g, i, in.value()));
      out.push_back(size);
    } else {
      out.push_back(symbolic_output(ctx, g, i, in));
    }
  }
  ctx.set_output(0, dtype, Shape(std::move(out)));
  return Status::ok();
}

// What every output point of one convolution reads.
struct ConvData {
  const Tensor& x;
  const Tensor& w;
  const Geometry& g;
  int64_t outputs_per_group;  // M / group
  std::vector<int64_t> kernel, x_strides, w_strides;
};

// Sums one output element: channel `m` of batch `n` at spatial `pos`.
double conv_point(const ConvData& d, int64_t n, int64_t m,
                  const std::vector<int64_t>& pos) {
  int64_t group_channels = d.w.dim(1);
  int64_t first_channel = m / d.outputs_per_group * group_channels;
  double sum = 0.0;
  for (int64_t c = 0; c < group_channels; ++c) {
    int64_t x_base = n * d.x_strides[0] + (first_channel + c) * d.x_strides[1];
    int64_t w_base = m * d.w_strides[0] + c * d.w_strides[1];
    for (CoordinateCounter k(d.kernel); !k.done(); k.next()) {
      int64_t x_index = x_base, w_index = w_base;
      bool inside = true;
      for (size_t i = 0; i < d.kernel.size() && inside; ++i) {
        int64_t at = pos[i] * d.g.strides[i] - d.g.pad_begin[i] +
                     k.coords()[i] * d.g.dilations[i];
        inside = at >= 0 && at < d.x.dim(i + 2);
        x_index += at * d.x_strides[i + 2];
        w_index += k.coords()[i] * d.w_strides[i + 2];
      }
      if (inside) sum += d.x.element_f64(x_index) * d.w.element_f64(w_index);
    }
  }
  return sum;
}

Status run_conv(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor* b = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, x.dtype(), w.dtype(),
                                     b ? b->dtype() : DType::kUndefined));
  std::optional<Shape> b_shape;
  if (b) b_shape = b->shape();
  SEQRT_RETURN_IF_ERROR(
      check_shapes(ctx, x.shape(), w.shape(), b_shape).status());
  SEQRT_ASSIGN_OR_RETURN(Geometry g, geometry(ctx, kernel_dims(w.shape())));
  std::vector<int64_t> dims = {x.dim(0), w.dim(0)};
  for (size_t i = 0; i + 2 < x.rank(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(int64_t size, output_size(ctx, g, i, x.dim(i + 2)));
    dims.push_back(size);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), dims));
  ConvData data{x,
                w,
                g,
                std::max<int64_t>(w.dim(0) / ctx.attr_int("group"), 1),
                std::vector<int64_t>(w.dims().begin() + 2, w.dims().end()),
                strides_of(x.dims()),
                strides_of(w.dims())};
  int64_t i = 0;
  for (CoordinateCounter c(dims); !c.done(); c.next(), ++i) {
    int64_t n = c.coords()[0], m = c.coords()[1];
    std::vector<int64_t> pos(c.coords().begin() + 2, c.coords().end());
    double sum = conv_point(data, n, m, pos);
    y->set_element_f64(i, sum + (b ? b->element_f64(m) : 0.0));
  }
  return Status::ok();
}

}  // namespace

void register_conv(OpRegistry& registry) {
  OpSchema s;
  s.name = "Conv";
  s.doc = "N-D grouped convolution with optional bias";
  s.inputs = {{"X"}, {"W"}, {"B", true}};
  s.outputs = {{"Y"}};
  s.attrs = {{"auto_pad",
              AttrType::kString,
              Attribute("NOTSET"),
              false,
              {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}},
             {"dilations", AttrType::kInts},
             {"group", AttrType::kInt, Attribute(1)},
             {"kernel_shape", AttrType::kInts},
             {"pads", AttrType::kInts},
             {"strides", AttrType::kInts}};
  s.infer = infer_conv;
  s.reference = run_conv;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
