// SelectiveScan (Mamba-1) on the CPU: one pass over time per block of
// scan_lanes() channels, one channel per vector lane, so every state row
// h[n] of the block is one vector, kept in registers a few rows at a time
// for a whole stretch of steps (scan_simd.h, ChannelScan). Softplus, the exp
// (FastExp2), the D-skip and the z-gate are fused; only the final state is
// written. Time is taken in stretches of kStretch steps whose Δ, u and y are
// transposed (8×8 in registers on AVX2) to (step, lane) scratch that stays in
// L1, so every per-step operation is one vector operation for the whole block;
// the D-skip and z-gate then run along the rows just written back.
// Threads take batch × channel blocks. Bm and Cm are transposed once to (L, N)
// rows per group so each step broadcasts from one contiguous row.
#include <hwy/aligned_allocator.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/scan_simd.h"
#include "backends/cpu/parallel.h"
#include "ops/sequence/selective_scan.h"

namespace seqrt::cpu {
namespace {

using In = SelectiveScanInput;

// Steps per stretch: Δ, Δ·u, u and y of a stretch (4 × 128 × lanes floats,
// 16 KiB with 8 lanes) and the decays of one pass stay in L1.
constexpr int64_t kStretch = 128;
// Channel blocks per task: at least kMinTaskWork state updates (channel ×
// step × n), so a decode step is not split into tasks smaller than the
// cost of waking a thread (measured: a 1536-channel step took 0.24 ms on
// one thread, 12 ms split 96 ways on a loaded 2-core machine).
constexpr int64_t kMinTaskWork = int64_t{1} << 18;
// exp(x) = 2^(x·log2 e): A is scaled once so the scan calls FastExp2.
constexpr float kLog2E = 1.44269504088896341f;

struct Loaded {
  Tensor u, delta, a, b, c, dskip, z, bias, past;
};

Result<Tensor> load_optional(const Tensor* tensor) {
  if (tensor == nullptr) return Tensor();
  return load_f32(*tensor);
}

Result<Loaded> load_inputs(const KernelContext& ctx) {
  Loaded in;
  Tensor* slots[In::kCount];
  slots[In::kU] = &in.u;
  slots[In::kDelta] = &in.delta;
  slots[In::kA] = &in.a;
  slots[In::kBm] = &in.b;
  slots[In::kCm] = &in.c;
  slots[In::kDskip] = &in.dskip;
  slots[In::kZ] = &in.z;
  slots[In::kDeltaBias] = &in.bias;
  slots[In::kPastState] = &in.past;
  for (size_t i = 0; i < In::kCount; ++i) {
    SEQRT_ASSIGN_OR_RETURN(*slots[i], load_optional(ctx.input(i)));
  }
  return in;
}

const float* data_or_null(const Tensor& tensor) {
  return tensor.empty() ? nullptr : tensor.data_as<float>();
}

// (B, G, N, L) -> (B, G, L, N).
std::vector<float> transpose_bc(const Tensor& m, const SelectiveScanDims& s) {
  std::vector<float> out(static_cast<size_t>(m.num_elements()));
  const float* src = m.data_as<float>();
  parallel_for(s.batch * s.groups, [&](int64_t bg) {
    const float* from = src + bg * s.state * s.length;
    float* to = out.data() + bg * s.length * s.state;
    for (int64_t n = 0; n < s.state; ++n) {
      for (int64_t t = 0; t < s.length; ++t) {
        to[t * s.state + n] = from[n * s.length + t];
      }
    }
  });
  return out;
}

// Everything one task reads; the rows of channel d start at d·L.
struct ScanInputs {
  const SelectiveScanDims& s;
  const float *u, *delta, *a, *dskip, *z, *bias, *past;
  const float *bt, *ct;  // (B, G, L, N)
  bool softplus;
  float *y, *state;
};

// Scratch of one task, aligned for whole-vector loads: rows of `lanes`
// channels are transposed into (step, lane) blocks and back.
struct BlockScratch {
  BlockScratch(size_t lanes, size_t n)
      : lanes(lanes),
        dt(block(kStretch * lanes)),
        dtx(block(kStretch * lanes)),
        u(block(kStretch * lanes)),
        y(block(kStretch * lanes)),
        a2(block(std::max<size_t>(n, 1) * lanes)),
        h(block(std::max<size_t>(n, 1) * lanes)),
        decay(block(channel_scan_decay_floats(kStretch))),
        bias(lanes),
        dskip(lanes),
        zeros(kStretch, 0.0f),
        sink(kStretch) {}

  static hwy::AlignedFreeUniquePtr<float[]> block(size_t size) {
    return hwy::AllocateAligned<float>(size);
  }

  size_t lanes;
  hwy::AlignedFreeUniquePtr<float[]> dt, dtx, u, y, a2, h, decay;
  std::vector<float> bias, dskip;
  // Rows of unused lanes: read as zeros, written to the sink.
  std::vector<float> zeros, sink;
};

// Channels [d0, d0 + count) of batch row b, count ≤ lanes, all in one group.
void scan_block(const ScanInputs& in, BlockScratch& w, int64_t b, int64_t d0,
                int64_t count) {
  const SelectiveScanDims& s = in.s;
  const int64_t lanes = static_cast<int64_t>(w.lanes);
  const int64_t n = s.state;
  const int64_t g = d0 / (s.channels / s.groups);
  // Unused lanes: a2 = 0 and u = 0 keep their (zero) state and y at 0.
  std::fill_n(w.a2.get(), n * lanes, 0.0f);
  std::fill_n(w.h.get(), n * lanes, 0.0f);
  std::fill(w.bias.begin(), w.bias.end(), 0.0f);
  std::fill(w.dskip.begin(), w.dskip.end(), 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t d = d0 + i;
    for (int64_t k = 0; k < n; ++k) {
      w.a2[k * lanes + i] = in.a[d * n + k] * kLog2E;
      if (in.past) w.h[k * lanes + i] = in.past[(b * s.channels + d) * n + k];
    }
    if (in.bias) w.bias[i] = in.bias[d];
    if (in.dskip) w.dskip[i] = in.dskip[d];
  }
  std::vector<const float*> delta_rows(lanes, w.zeros.data());
  std::vector<const float*> u_rows(lanes, w.zeros.data());
  std::vector<const float*> z_rows(lanes, w.zeros.data());
  std::vector<float*> y_rows(lanes, w.sink.data());
  const int64_t bc = (b * s.groups + g) * s.length * n;
  for (int64_t t0 = 0; t0 < s.length; t0 += kStretch) {
    const size_t len = static_cast<size_t>(std::min(kStretch, s.length - t0));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = (b * s.channels + d0 + i) * s.length + t0;
      delta_rows[i] = in.delta + row;
      u_rows[i] = in.u + row;
      if (in.z) z_rows[i] = in.z + row;
      y_rows[i] = in.y + row;
    }
    rows_to_block(delta_rows.data(), len, w.dt.get());
    rows_to_block(u_rows.data(), len, w.u.get());
    delta_block(w.dt.get(), w.bias.data(), in.softplus, w.u.get(), w.dtx.get(),
                len);
    ChannelScan scan;
    scan.length = len;
    scan.n = static_cast<size_t>(n);
    scan.dt = w.dt.get();
    scan.dtx = w.dtx.get();
    scan.a2 = w.a2.get();
    scan.b = in.bt + bc + t0 * n;
    scan.c = in.ct + bc + t0 * n;
    scan.bc_stride = static_cast<size_t>(n);
    scan.h = w.h.get();
    scan.y = w.y.get();
    scan.decay = w.decay.get();
    scan_channels(scan);
    block_to_rows(w.y.get(), len, y_rows.data());
    // The skip and the gate on the rows just written (in L1): no transpose
    // of z.
    for (int64_t i = 0; i < count; ++i) {
      skip_and_gate(y_rows[i], u_rows[i], in.dskip != nullptr, w.dskip[i],
                    in.z ? z_rows[i] : nullptr, len);
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    float* state = in.state + (b * s.channels + d0 + i) * n;
    for (int64_t k = 0; k < n; ++k) state[k] = w.h[k * lanes + i];
  }
}

Status run_selective_scan(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims s, check_selective_scan(ctx));
  SEQRT_ASSIGN_OR_RETURN(Loaded in, load_inputs(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, SelectiveScanOutput::kY,
                                    ctx.input(In::kU)->dtype(), in.u.dims()));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state,
      Tensor::allocate(DType::kF32, {s.batch, s.channels, s.state}));
  const std::vector<float> bt = transpose_bc(in.b, s);
  const std::vector<float> ct = transpose_bc(in.c, s);
  const ScanInputs inputs{s,
                          in.u.data_as<float>(),
                          in.delta.data_as<float>(),
                          in.a.data_as<float>(),
                          data_or_null(in.dskip),
                          data_or_null(in.z),
                          data_or_null(in.bias),
                          data_or_null(in.past),
                          bt.data(),
                          ct.data(),
                          SelectiveScanAttrs::from(ctx.node()).delta_softplus,
                          y.mutable_data_as<float>(),
                          state.mutable_data_as<float>()};

  // Blocks never straddle groups: each group's channels are cut into
  // blocks of `lanes`, the last one partial.
  const int64_t lanes = static_cast<int64_t>(scan_lanes());
  const int64_t group_size = s.groups > 0 ? s.channels / s.groups : 0;
  const int64_t per_group = (group_size + lanes - 1) / lanes;
  const int64_t blocks = s.batch * s.groups * per_group;
  const int64_t work = std::max<int64_t>(1, s.length * s.state * lanes);
  const int64_t per_task = std::max<int64_t>(1, kMinTaskWork / work);
  const int64_t tasks = (blocks + per_task - 1) / per_task;
  parallel_for(tasks, [&](int64_t task) {
    BlockScratch scratch(static_cast<size_t>(lanes),
                         static_cast<size_t>(s.state));
    const int64_t end = std::min(blocks, (task + 1) * per_task);
    for (int64_t block = task * per_task; block < end; ++block) {
      const int64_t b = block / (s.groups * per_group);
      const int64_t g = block / per_group % s.groups;
      const int64_t first = (block % per_group) * lanes;
      const int64_t count = std::min(lanes, group_size - first);
      scan_block(inputs, scratch, b, g * group_size + first, count);
    }
  });

  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, SelectiveScanOutput::kY, y,
                                      ctx.input(In::kU)->dtype()));
  if (ctx.num_outputs() > SelectiveScanOutput::kPresentState) {
    const Tensor* past_in = ctx.input(In::kPastState);
    SEQRT_RETURN_IF_ERROR(set_output_as(
        ctx, SelectiveScanOutput::kPresentState, state,
        state_dtype(past_in ? past_in->dtype() : DType::kUndefined)));
  }
  return Status::ok();
}

Status supports_selective_scan(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_selective_scan_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "SelectiveScan", run_selective_scan,
                      supports_selective_scan});
}

}  // namespace seqrt::cpu
