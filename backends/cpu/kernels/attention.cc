// CPU kernel of seqrt::Attention: converts at the edges (f16/bf16/f64 <->
// f32), writes present = concat(past, new) once and attends over it with the
// flash core of attention_kernel.h.
#include <cstring>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/attention_kernel.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/parallel.h"
#include "ops/sequence/attention.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

void set_strides(const std::vector<int64_t>& dims, int64_t* out) {
  std::vector<int64_t> strides = strides_of(dims);
  for (int i = 0; i < 3; ++i) out[i] = strides[i];
}

// concat(past, fresh) on the T axis of (B,H,T,width) f32 tensors.
Result<Tensor> concat_time(const AttentionSpec& s, const Tensor& past,
                           const Tensor& fresh, int64_t width) {
  SEQRT_ASSIGN_OR_RETURN(
      Tensor out,
      Tensor::allocate(DType::kF32, {s.batch, s.kv_heads, s.total_len, width}));
  const float* p = past.data_as<float>();
  const float* f = fresh.data_as<float>();
  float* o = out.mutable_data_as<float>();
  const int64_t past_block = s.past_len * width;
  const int64_t new_block = s.new_len * width;
  parallel_for(s.batch * s.kv_heads, [&](int64_t bh) {
    float* dst = o + bh * (past_block + new_block);
    std::memcpy(dst, p + bh * past_block, sizeof(float) * past_block);
    std::memcpy(dst + past_block, f + bh * new_block,
                sizeof(float) * new_block);
  });
  return out;
}

// The keys (or values) to attend over, f32: concat(past, new) or new.
Result<Tensor> keys_f32(const KernelContext& ctx, const AttentionSpec& s,
                        size_t fresh_index, size_t past_index, int64_t width) {
  SEQRT_ASSIGN_OR_RETURN(Tensor fresh, load_f32(*ctx.input(fresh_index)));
  if (!ctx.has_input(past_index)) return fresh;
  SEQRT_ASSIGN_OR_RETURN(Tensor past, load_f32(*ctx.input(past_index)));
  return concat_time(s, past, fresh, width);
}

Status set_present(KernelContext& ctx, size_t index, const Tensor& keys,
                   DType dtype) {
  if (!attention_wants_output(ctx, index)) return Status::ok();
  // Without past, `keys` may be the caller's K itself: the output owns a
  // copy.
  bool shared = keys.data() ==
                ctx.input(index == kAttnPresentKey ? kAttnK : kAttnV)->data();
  SEQRT_ASSIGN_OR_RETURN(Tensor out, store_as(keys, dtype));
  ctx.set_output(index, shared && dtype == DType::kF32 ? out.clone() : out);
  return Status::ok();
}

Status run_attention_cpu(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(AttentionSpec s, attention_spec(ctx));
  const DType dtype = ctx.input(kAttnQ)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor q, load_f32(*ctx.input(kAttnQ)));
  SEQRT_ASSIGN_OR_RETURN(Tensor k,
                         keys_f32(ctx, s, kAttnK, kAttnPastKey, s.head_dim));
  SEQRT_ASSIGN_OR_RETURN(Tensor v,
                         keys_f32(ctx, s, kAttnV, kAttnPastValue, s.value_dim));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor y, f32_output(ctx, kAttnY, dtype,
                           {s.batch, s.q_heads, s.q_len, s.value_dim}));
  AttentionArgs a;
  a.batch = s.batch;
  a.q_heads = s.q_heads;
  a.kv_heads = s.kv_heads;
  a.q_len = s.q_len;
  a.kv_len = s.total_len;
  a.head_dim = s.head_dim;
  a.value_dim = s.value_dim;
  a.q = q.data_as<float>();
  set_strides(q.dims(), a.q_stride);
  a.k = k.data_as<float>();
  set_strides(k.dims(), a.k_stride);
  a.v = v.data_as<float>();
  set_strides(v.dims(), a.v_stride);
  a.y = y.mutable_data_as<float>();
  set_strides(y.dims(), a.y_stride);
  Tensor mask;
  if (s.has_mask) {
    std::vector<int64_t> strides = broadcast_strides(
        s.mask_dims, {s.batch, s.q_heads, s.q_len, s.total_len});
    for (int i = 0; i < 4; ++i) a.mask_stride[i] = strides[i];
    if (s.mask_is_bool) {
      a.mask_bool = ctx.input(kAttnMask)->data_as<bool>();
    } else {
      SEQRT_ASSIGN_OR_RETURN(mask, load_f32(*ctx.input(kAttnMask)));
      a.mask_f32 = mask.data_as<float>();
    }
  }
  if (!s.kv_lens.empty()) a.kv_lens = s.kv_lens.data();
  a.sigmoid = s.sigmoid;
  a.scale = s.scale;
  a.softcap = s.softcap;
  a.sigmoid_bias = s.sigmoid_bias;
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  attention_forward(a);

  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, kAttnY, y, dtype));
  SEQRT_RETURN_IF_ERROR(set_present(ctx, kAttnPresentKey, k, dtype));
  return set_present(ctx, kAttnPresentValue, v, dtype);
}

}  // namespace

void register_attention_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "Attention", run_attention_cpu, nullptr});
}

}  // namespace seqrt::cpu
