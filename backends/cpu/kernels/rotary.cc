// CPU kernel of RotaryEmbedding (opset 23): each head vector's first
// rotary_dim channels rotate in pairs, (i, i + rotary_dim/2) or (2i, 2i+1)
// when interleaved, by the cached cos/sin of its position; the rest pass
// through. Shapes are checked by the op's inference; positions before the
// parallel loop over (batch, seq) rows. f32/f16/bf16 compute in f32, f64 in
// double.
#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"

namespace seqrt::cpu {
namespace {

struct RotaryShape {
  int64_t batch, seq, heads, head_size, rotary_dim;
  bool four_d;  // X is (batch, heads, seq, head_size)
  bool interleaved;
};

template <typename T>
void rotate_head(const RotaryShape& r, const T* x, const T* cos, const T* sin,
                 T* y) {
  const int64_t half = r.rotary_dim / 2;
  if (r.interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      T x1 = x[2 * i], x2 = x[2 * i + 1];
      y[2 * i] = x1 * cos[i] - x2 * sin[i];
      y[2 * i + 1] = x1 * sin[i] + x2 * cos[i];
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      T x1 = x[i], x2 = x[i + half];
      y[i] = x1 * cos[i] - x2 * sin[i];
      y[i + half] = x1 * sin[i] + x2 * cos[i];
    }
  }
  for (int64_t c = r.rotary_dim; c < r.head_size; ++c) y[c] = x[c];
}

template <typename T>
void rotary(const RotaryShape& r, const T* x, const T* cos, const T* sin,
            const std::vector<int64_t>& rows, T* y) {
  const int64_t half = r.rotary_dim / 2;
  parallel_chunks(
      r.batch * r.seq, std::max<int64_t>(1, 4096 / (r.heads * r.head_size + 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t bs = begin; bs < end; ++bs) {
          const int64_t b = bs / r.seq, s = bs % r.seq;
          const int64_t cache = rows[bs] * half;
          for (int64_t h = 0; h < r.heads; ++h) {
            int64_t base = r.four_d
                               ? ((b * r.heads + h) * r.seq + s) * r.head_size
                               : (bs * r.heads + h) * r.head_size;
            rotate_head(r, x + base, cos + cache, sin + cache, y + base);
          }
        }
      });
}

Status run_rotary(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& x = *ctx.input(0);
  const Tensor& cos = *ctx.input(1);
  const Tensor& sin = *ctx.input(2);
  const Tensor* positions = ctx.input(3);
  RotaryShape r;
  r.four_d = x.rank() == 4;
  r.batch = x.dim(0);
  r.seq = x.dim(r.four_d ? 2 : 1);
  r.heads = r.four_d ? x.dim(1) : ctx.attr_int("num_heads");
  r.head_size = r.four_d ? x.dim(3) : x.dim(2) / r.heads;
  r.rotary_dim = ctx.attr_int("rotary_embedding_dim");
  if (r.rotary_dim == 0) r.rotary_dim = r.head_size;
  r.interleaved = ctx.attr_int("interleaved") != 0;
  // The cache row of every (batch, seq) position.
  std::vector<int64_t> rows(static_cast<size_t>(r.batch * r.seq));
  for (int64_t i = 0; i < r.batch * r.seq; ++i) {
    rows[i] = i;
    if (positions == nullptr) continue;
    rows[i] = positions->element_i64(i);
    if (rows[i] < 0 || rows[i] >= cos.dim(0)) {
      return ctx.error(
          "position_ids[{},{}] = {} is outside the caches' [0, {})", i / r.seq,
          i % r.seq, rows[i], cos.dim(0));
    }
  }
  if (x.dtype() == DType::kF64) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), dims));
    rotary<double>(r, x.data_as<double>(), cos.data_as<double>(),
                   sin.data_as<double>(), rows, y->mutable_data_as<double>());
    return Status::ok();
  }
  if (!is_f32_family(x.dtype())) {
    return ctx.unsupported_error("{} input", dtype_name(x.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor xf, load_f32(x));
  SEQRT_ASSIGN_OR_RETURN(Tensor cf, load_f32(cos));
  SEQRT_ASSIGN_OR_RETURN(Tensor sf, load_f32(sin));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x.dtype(), dims));
  rotary<float>(r, xf.data_as<float>(), cf.data_as<float>(),
                sf.data_as<float>(), rows, y.mutable_data_as<float>());
  return set_output_as(ctx, 0, y, x.dtype());
}

}  // namespace

void register_rotary_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "RotaryEmbedding", run_rotary, nullptr});
}

}  // namespace seqrt::cpu
