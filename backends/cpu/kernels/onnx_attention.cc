// CPU kernels of ONNX Attention and TensorScatter (opset 24).
//
// Attention maps ONNX's semantics onto the flash core of attention_kernel.h:
// 3D (B,T,H*d) inputs are read in place through strides, GQA is the core's
// head grouping, nonpad_kv_seqlen is its kv_lens. Two ONNX rules the core
// does not state directly are turned into an explicit f32 bias over
// (Bm,Hm,Tq,Ttot) (Bm, Hm: the mask's own broadcast sizes), built only when
// needed: a mask shorter than Ttot (the keys past it are hidden), and causal
// masking whose ONNX alignment (offset Tp with a past cache, 0 without) is
// not the core's bottom-right one, which happens when Tq != Tk.
// qk_matmul_output, when asked for, is formed separately (sgemm per head,
// then the stages its mode names): the flash core never holds it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/attention_kernel.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"
#include "ops/sequence/onnx_attention.h"
#include "ops/sequence/tensor_scatter.h"

namespace seqrt::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// concat(past, fresh) on the time axis as (B,Hkv,Ttot,width) f32; `fresh`
// is read through its layout (packed or 4D).
Result<Tensor> concat_cache(const OnnxAttentionSpec& s, const Tensor* past,
                            const Tensor& fresh, int64_t width) {
  SEQRT_ASSIGN_OR_RETURN(
      Tensor out,
      Tensor::allocate(DType::kF32, {s.batch, s.kv_heads, s.total_len, width}));
  const float* p = past != nullptr ? past->data_as<float>() : nullptr;
  const float* f = fresh.data_as<float>();
  float* o = out.mutable_data_as<float>();
  int64_t stride[3];
  s.kv_strides(width, stride);
  const size_t row = sizeof(float) * static_cast<size_t>(width);
  parallel_for(s.batch * s.kv_heads, [&](int64_t bh) {
    int64_t b = bh / s.kv_heads, h = bh % s.kv_heads;
    float* dst = o + bh * s.total_len * width;
    if (s.past_len > 0) {
      std::memcpy(dst, p + bh * s.past_len * width, row * s.past_len);
    }
    const float* src = f + b * stride[0] + h * stride[1];
    for (int64_t t = 0; t < s.new_len; ++t) {
      std::memcpy(dst + (s.past_len + t) * width, src + t * stride[2], row);
    }
  });
  return out;
}

// Whether ONNX's causal alignment equals the core's bottom-right one
// (query i at valid_len(b) - Tq + i) for every batch.
bool core_aligned(const OnnxAttentionSpec& s) {
  for (int64_t b = 0; b < s.batch; ++b) {
    if (s.causal_offset(b) != s.valid_len(b) - s.q_len) return false;
  }
  return true;
}

// The explicit bias over (Bm,Hm,Tq,Ttot): the mask (bool as 0/-inf), -inf
// past its last key, and, if `bake_causal`, -inf for causally hidden keys.
Result<Tensor> explicit_bias(const KernelContext& ctx,
                             const OnnxAttentionSpec& s, bool bake_causal) {
  std::vector<int64_t> dims(4 - s.mask_dims.size(), 1);
  dims.insert(dims.end(), s.mask_dims.begin(), s.mask_dims.end());
  int64_t bm = dims[0], hm = dims[1], tm = dims[2], lm = dims[3];
  if (!s.has_mask) lm = s.total_len;
  Tensor mask;
  if (s.has_mask) {
    SEQRT_ASSIGN_OR_RETURN(mask, load_f32(*ctx.input(kOnnxAttnMask)));
  }
  const float* m = s.has_mask ? mask.data_as<float>() : nullptr;
  SEQRT_ASSIGN_OR_RETURN(
      Tensor bias,
      Tensor::allocate(DType::kF32, {bm, hm, s.q_len, s.total_len}));
  float* out = bias.mutable_data_as<float>();
  parallel_for(bm * hm * s.q_len, [&](int64_t r) {
    int64_t i = r % s.q_len, bh = r / s.q_len, b = bh / hm;
    const float* src =
        m == nullptr ? nullptr : m + (bh * tm + (tm == 1 ? 0 : i)) * lm;
    float* dst = out + r * s.total_len;
    for (int64_t j = 0; j < s.total_len; ++j) {
      float x = j >= lm ? kNegInf : src == nullptr ? 0.0f : src[j];
      if (s.mask_is_bool && j < lm) x = x != 0.0f ? 0.0f : kNegInf;
      if (bake_causal && j > i + s.causal_offset(b)) x = kNegInf;
      dst[j] = x;
    }
  });
  return bias;
}

// Strides of a (Bm,Hm,Tm,Ttot) mask read as (B,Hq,Tq,Ttot): 0 on the
// broadcast axes. Its last axis always covers every key here.
void set_mask_strides(const std::vector<int64_t>& dims, int64_t out[4]) {
  out[3] = 1;
  out[2] = dims[2] == 1 ? 0 : dims[3];
  out[1] = dims[1] == 1 ? 0 : dims[2] * dims[3];
  out[0] = dims[0] == 1 ? 0 : dims[1] * dims[2] * dims[3];
}

// Sets the core's mask from the node's mask or an explicit bias; `holder`
// keeps converted data alive.
Status set_mask(const KernelContext& ctx, const OnnxAttentionSpec& s,
                bool bake_causal, AttentionArgs& a, Tensor& holder) {
  bool short_mask = s.has_mask && s.mask_dims.back() < s.total_len;
  if (!s.has_mask && !bake_causal) return Status::ok();
  std::vector<int64_t> dims;
  if (short_mask || bake_causal) {
    SEQRT_ASSIGN_OR_RETURN(holder, explicit_bias(ctx, s, bake_causal));
    a.mask_f32 = holder.data_as<float>();
    dims = holder.dims();
  } else {
    dims.assign(4 - s.mask_dims.size(), 1);
    dims.insert(dims.end(), s.mask_dims.begin(), s.mask_dims.end());
    if (s.mask_is_bool) {
      a.mask_bool = ctx.input(kOnnxAttnMask)->data_as<bool>();
    } else {
      SEQRT_ASSIGN_OR_RETURN(holder, load_f32(*ctx.input(kOnnxAttnMask)));
      a.mask_f32 = holder.data_as<float>();
    }
  }
  set_mask_strides(dims, a.mask_stride);
  return Status::ok();
}

Status set_presents(KernelContext& ctx, const Tensor& keys,
                    const Tensor& values) {
  for (size_t index : {kOnnxAttnPresentKey, kOnnxAttnPresentValue}) {
    if (!onnx_attention_wants_output(ctx, index)) continue;
    bool is_key = index == kOnnxAttnPresentKey;
    DType dtype = ctx.input(is_key ? kOnnxAttnQ : kOnnxAttnV)->dtype();
    SEQRT_ASSIGN_OR_RETURN(Tensor out, store_as(is_key ? keys : values, dtype));
    ctx.set_output(index, out);
  }
  return Status::ok();
}

// qk_matmul_output (B,Hq,Tq,Ttot) at the stage of s.qk_mode: scale*Q.K^T,
// softcapped, plus the bias (mask, causal, padding), or the softmax.
Result<Tensor> qk_scores(const KernelContext& ctx, const OnnxAttentionSpec& s,
                         const AttentionArgs& a) {
  const int64_t tq = s.q_len, tk = s.total_len;
  SEQRT_ASSIGN_OR_RETURN(
      Tensor out, Tensor::allocate(DType::kF32, {s.batch, s.q_heads, tq, tk}));
  Tensor bias;
  const bool biased = s.qk_mode == QkOutputMode::kWithBias ||
                      s.qk_mode == QkOutputMode::kSoftmax;
  if (biased) {
    SEQRT_ASSIGN_OR_RETURN(bias, explicit_bias(ctx, s, s.causal));
  }
  const int64_t group = s.q_heads / s.kv_heads;
  float* o = out.mutable_data_as<float>();
  parallel_for(s.batch * s.q_heads, [&](int64_t bh) {
    const int64_t b = bh / s.q_heads, h = bh % s.q_heads;
    float* scores = o + bh * tq * tk;
    sgemm(false, true, tq, tk, s.head_dim, a.scale,
          a.q + b * a.q_stride[0] + h * a.q_stride[1], a.q_stride[2],
          a.k + b * a.k_stride[0] + (h / group) * a.k_stride[1], a.k_stride[2],
          0.0f, scores, tk);
    for (int64_t i = 0; i < tq; ++i) {
      float* row = scores + i * tk;
      if (s.qk_mode != QkOutputMode::kScaledProduct && a.softcap > 0.0f) {
        for (int64_t j = 0; j < tk; ++j) {
          row[j] = a.softcap * std::tanh(row[j] / a.softcap);
        }
      }
      if (!biased) continue;
      const int64_t bm = bias.dim(0) == 1 ? 0 : b,
                    hm = bias.dim(1) == 1 ? 0 : h;
      const float* add =
          bias.data_as<float>() + ((bm * bias.dim(1) + hm) * tq + i) * tk;
      for (int64_t j = 0; j < tk; ++j) {
        row[j] = j < s.valid_len(b) ? row[j] + add[j] : kNegInf;
      }
      if (s.qk_mode != QkOutputMode::kSoftmax) continue;
      const float top = max_value(row, tk);
      if (top == kNegInf) {
        std::fill(row, row + tk, 0.0f);
        continue;
      }
      scale(1.0f / exp_shifted_sum(row, tk, top), row, tk);
    }
  });
  return out;
}

Status run_onnx_attention_cpu(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(OnnxAttentionSpec s, onnx_attention_spec(ctx));
  const DType dtype = ctx.input(kOnnxAttnQ)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor q, load_f32(*ctx.input(kOnnxAttnQ)));
  SEQRT_ASSIGN_OR_RETURN(Tensor k, load_f32(*ctx.input(kOnnxAttnK)));
  SEQRT_ASSIGN_OR_RETURN(Tensor v, load_f32(*ctx.input(kOnnxAttnV)));
  AttentionArgs a;
  a.batch = s.batch;
  a.q_heads = s.q_heads;
  a.kv_heads = s.kv_heads;
  a.q_len = s.q_len;
  a.kv_len = s.total_len;
  a.head_dim = s.head_dim;
  a.value_dim = s.value_dim;
  a.q = q.data_as<float>();
  s.q_strides(a.q_stride);
  // The keys are attended in place unless a past cache is concatenated or
  // present outputs (always (B,Hkv,Ttot,w)) are wanted.
  bool materialize = s.past_len > 0 ||
                     onnx_attention_wants_output(ctx, kOnnxAttnPresentKey) ||
                     onnx_attention_wants_output(ctx, kOnnxAttnPresentValue);
  Tensor keys = k, values = v;
  if (materialize) {
    Tensor past_k, past_v;
    if (s.past_len > 0) {
      SEQRT_ASSIGN_OR_RETURN(past_k, load_f32(*ctx.input(kOnnxAttnPastKey)));
      SEQRT_ASSIGN_OR_RETURN(past_v, load_f32(*ctx.input(kOnnxAttnPastValue)));
    }
    const Tensor* pk = s.past_len > 0 ? &past_k : nullptr;
    const Tensor* pv = s.past_len > 0 ? &past_v : nullptr;
    SEQRT_ASSIGN_OR_RETURN(keys, concat_cache(s, pk, k, s.head_dim));
    SEQRT_ASSIGN_OR_RETURN(values, concat_cache(s, pv, v, s.value_dim));
    int64_t t = s.total_len;
    int64_t ks[3] = {s.kv_heads * t * s.head_dim, t * s.head_dim, s.head_dim};
    int64_t vs[3] = {s.kv_heads * t * s.value_dim, t * s.value_dim,
                     s.value_dim};
    std::memcpy(a.k_stride, ks, sizeof(ks));
    std::memcpy(a.v_stride, vs, sizeof(vs));
  } else {
    s.kv_strides(s.head_dim, a.k_stride);
    s.kv_strides(s.value_dim, a.v_stride);
  }
  a.k = keys.data_as<float>();
  a.v = values.data_as<float>();
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, kOnnxAttnY, dtype, s.y_dims()));
  a.y = y.mutable_data_as<float>();
  s.y_strides(a.y_stride);
  bool aligned = core_aligned(s);
  Tensor mask_holder;
  SEQRT_RETURN_IF_ERROR(set_mask(ctx, s, s.causal && !aligned, a, mask_holder));
  if (!s.kv_lens.empty()) a.kv_lens = s.kv_lens.data();
  a.scale = static_cast<float>(s.scale);
  a.softcap = static_cast<float>(s.softcap);
  a.causal = s.causal && aligned;
  attention_forward(a);

  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, kOnnxAttnY, y, dtype));
  if (onnx_attention_wants_output(ctx, kOnnxAttnQkMatmul)) {
    SEQRT_ASSIGN_OR_RETURN(Tensor scores, qk_scores(ctx, s, a));
    SEQRT_ASSIGN_OR_RETURN(Tensor qk_out, store_as(scores, dtype));
    ctx.set_output(kOnnxAttnQkMatmul, qk_out);
  }
  return set_presents(ctx, keys, values);
}

// Writes the update rows into each slab of the cache: one memcpy, two when
// a circular write wraps. The cache is updated in place when the executor
// hands it over (the Stream's KV cache: a step costs its new rows, not the
// capacity); otherwise it is copied first.
Status run_tensor_scatter_cpu(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(TensorScatterSpec s, tensor_scatter_spec(ctx));
  const auto* src = static_cast<const uint8_t*>(ctx.input(1)->data());
  const int64_t slab_bytes = s.max_len * s.row_bytes;
  const uint8_t* old = nullptr;
  if (std::optional<Tensor> cache = ctx.take_input(0)) {
    ctx.set_output(0, std::move(*cache));
  } else {
    const Tensor& past = *ctx.input(0);
    SEQRT_RETURN_IF_ERROR(
        ctx.allocate_output(0, past.dtype(), past.dims()).status());
    old = static_cast<const uint8_t*>(past.data());
  }
  auto* dst = static_cast<uint8_t*>(ctx.outputs()[0].mutable_data());
  parallel_for(s.batch * s.prefix, [&](int64_t slab) {
    uint8_t* to = dst + slab * slab_bytes;
    if (old != nullptr) {
      std::memcpy(to, old + slab * slab_bytes, static_cast<size_t>(slab_bytes));
    }
    int64_t b = slab / s.prefix;
    int64_t start = s.position(b, 0);
    int64_t first = std::min(s.seq_len, s.max_len - start);
    const uint8_t* from = src + slab * s.seq_len * s.row_bytes;
    std::memcpy(to + start * s.row_bytes, from,
                static_cast<size_t>(first * s.row_bytes));
    std::memcpy(to, from + first * s.row_bytes,
                static_cast<size_t>((s.seq_len - first) * s.row_bytes));
  });
  return Status::ok();
}

}  // namespace

void register_onnx_attention_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "Attention", run_onnx_attention_cpu, nullptr});
  table.add(
      CpuKernel{kOnnxDomain, "TensorScatter", run_tensor_scatter_cpu, nullptr});
}

}  // namespace seqrt::cpu
