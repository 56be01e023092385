// Pad: adds pads[i] elements before and pads[i + n] after each of the n
// `axes` (optional input, default all); negative pads crop. Modes:
// constant (constant_value, default 0), reflect (mirror without repeating
// the edge), edge (repeat the edge), wrap (periodic).
#include <algorithm>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// Begin and end pads of every dim (zero where an axis is not padded).
struct FullPads {
  std::vector<int64_t> begin, end;
};

Result<FullPads> full_pads(const OpContext& ctx,
                           const std::vector<int64_t>& pads,
                           const std::optional<std::vector<int64_t>>& axes,
                           int64_t rank) {
  std::vector<int64_t> all(rank);
  for (int64_t d = 0; d < rank; ++d) all[d] = d;
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> normalized,
                         normalize_axes(ctx, axes ? *axes : all, rank));
  size_t n = normalized.size();
  if (pads.size() != 2 * n) {
    return ctx.error("pads {} must have 2 * {} entries (begins, then ends)",
                     dims_to_string(pads), n);
  }
  FullPads full{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
  for (size_t i = 0; i < n; ++i) {
    for (int64_t pad : {pads[i], pads[i + n]}) {
      if (pad < -kMaxElements || pad > kMaxElements) {
        return ctx.error("pad {} is out of range", pad);
      }
    }
    full.begin[normalized[i]] = pads[i];
    full.end[normalized[i]] = pads[i + n];
  }
  return full;
}

Result<int64_t> padded_dim(const OpContext& ctx, int64_t dim, int64_t begin,
                           int64_t end, int64_t axis) {
  int64_t out = dim + begin + end;
  if (out < 0) {
    return ctx.error("pads {} and {} crop axis {} of size {} below zero", begin,
                     end, axis, dim);
  }
  bool copies_from_data = ctx.attr_string("mode") != "constant";
  if (copies_from_data && dim == 0 && out > 0) {
    return ctx.error("mode {} cannot pad axis {}, which is empty",
                     ctx.attr_string("mode"), axis);
  }
  return out;
}

Status infer_pad(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto pads, known_int_list(ctx, 1, "pads"));
  SEQRT_ASSIGN_OR_RETURN(auto axes, known_int_list(ctx, 3, "axes"));
  if (ctx.has_input(2) && ctx.input_dtype(2) != dtype) {
    return ctx.error("constant_value is {} but data is {}",
                     dtype_name(ctx.input_dtype(2)), dtype_name(dtype));
  }
  if (!in) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  int64_t rank = static_cast<int64_t>(in->rank());
  if (!pads || (ctx.has_input(3) && !axes)) {
    ctx.set_output(0, dtype, unknown_shape(in->rank()));
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(FullPads full, full_pads(ctx, *pads, axes, rank));
  Shape out = *in;
  for (int64_t d = 0; d < rank; ++d) {
    SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, out[d]));
    if (out[d].is_fixed()) {
      SEQRT_ASSIGN_OR_RETURN(out[d], padded_dim(ctx, out[d].value(),
                                                full.begin[d], full.end[d], d));
    } else if (full.begin[d] + full.end[d] != 0) {
      out[d] = Dim::unknown();
    }
  }
  ctx.set_output(0, dtype, out);
  return Status::ok();
}

}  // namespace

int64_t pad_source_index(const std::string& mode, int64_t i, int64_t dim) {
  if (i >= 0 && i < dim) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : dim - 1;
  if (mode == "wrap") return ((i % dim) + dim) % dim;
  if (dim == 1) return 0;  // reflect: period 2 * (dim - 1)
  int64_t period = 2 * (dim - 1);
  int64_t m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

namespace {

// For each axis, the source index of every output position (-1: the
// constant).
std::vector<std::vector<int64_t>> source_maps(const std::string& mode,
                                              const Tensor& in,
                                              const std::vector<int64_t>& dims,
                                              const FullPads& pads) {
  std::vector<std::vector<int64_t>> maps(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) {
    for (int64_t i = 0; i < dims[d]; ++i) {
      maps[d].push_back(pad_source_index(mode, i - pads.begin[d], in.dim(d)));
    }
  }
  return maps;
}

Status run_pad(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(auto pads, read_int_list(ctx, *ctx.input(1), "pads"));
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
  }
  const Tensor* fill = ctx.input(2);
  if (fill && (fill->dtype() != in.dtype() || fill->num_elements() != 1)) {
    return ctx.error("constant_value must be one {} value, got {}{}",
                     dtype_name(in.dtype()), dtype_name(fill->dtype()),
                     dims_to_string(fill->dims()));
  }
  SEQRT_ASSIGN_OR_RETURN(
      FullPads full,
      full_pads(ctx, pads, axes, static_cast<int64_t>(in.rank())));
  std::vector<int64_t> dims(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) {
    SEQRT_ASSIGN_OR_RETURN(
        dims[d], padded_dim(ctx, in.dim(d), full.begin[d], full.end[d],
                            static_cast<int64_t>(d)));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  auto maps = source_maps(ctx.attr_string("mode"), in, dims, full);
  std::vector<int64_t> strides = strides_of(in.dims());
  int64_t i = 0;
  for (CoordinateCounter c(dims); !c.done(); c.next(), ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < dims.size() && src >= 0; ++d) {
      int64_t index = maps[d][c.coords()[d]];
      src = index < 0 ? -1 : src + index * strides[d];
    }
    if (src >= 0) {
      copy_elements(in, src, *out, i);
    } else if (fill) {
      copy_elements(*fill, 0, *out, i);
    }  // else: the output is zero-filled already
  }
  return Status::ok();
}

}  // namespace

void register_pad(OpRegistry& registry) {
  OpSchema s;
  s.name = "Pad";
  s.doc = "pads (or crops) the input along some axes";
  s.inputs = {{"data"}, {"pads"}, {"constant_value", true}, {"axes", true}};
  s.outputs = {{"output"}};
  s.attrs = {{"mode",
              AttrType::kString,
              Attribute("constant"),
              false,
              {"constant", "reflect", "edge", "wrap"}}};
  s.infer = infer_pad;
  s.reference = run_pad;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
