// CPU kernel of seqrt::RungeKutta. The body runs through the executor's
// subgraph runner (so its nodes run on CPU kernels); the stage combinations
// are fused: one vectorised pass per stage writes the next stage's input
// and updates the accumulator, and the gated rk2 computes its gate on the
// rows while they are in cache. RK4 keeps only y, the accumulator, the
// stage input (reused for every stage) and the current F live.
#include <cmath>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/elementwise_simd.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/simd/vec.h"
#include "ops/control/subgraph.h"
#include "ops/sequence/runge_kutta.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

// The state of one step: y, its dtype, and the body's runner.
struct Step {
  KernelContext& ctx;
  const RungeKuttaSetup& setup;
  const Tensor& y_in;  // as given, in its own dtype
  Tensor y;            // f32
  size_t n = 0;
};

// F(input) in f32; `input` is f32 and is converted to y's dtype for the
// body when that is f16/bf16.
Result<Tensor> evaluate(Step& step, int stage, const Tensor& input) {
  SEQRT_ASSIGN_OR_RETURN(Tensor body_input, store_as(input, step.y_in.dtype()));
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<Tensor> out,
      run_body(step.ctx, "body", *step.setup.body, {body_input}));
  SEQRT_RETURN_IF_ERROR(check_stage_output(step.ctx, stage, out[0], step.y_in));
  return load_f32(out[0]);
}

// next = y + a·f and acc = acc_in + b·f over all elements, in parallel.
void stage_pass(const Step& step, const Tensor& f, float a, Tensor* next,
                const float* acc_in, float b, float* acc) {
  const float* py = step.y.data_as<float>();
  const float* pf = f.data_as<float>();
  float* pn = next ? next->mutable_data_as<float>() : nullptr;
  parallel_chunks(
      static_cast<int64_t>(step.n), kGrain, [&](int64_t begin, int64_t end) {
        rk_stage_pass_f32(py + begin, pf + begin, a, pn ? pn + begin : nullptr,
                          acc_in + begin, b, acc + begin,
                          static_cast<size_t>(end - begin));
      });
}

float sigmoid(float x) {
  float e = std::exp(-std::fabs(x));
  return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

// rk2_gated: F1 = F(y), F2 = F(y + F1), y + g·F1 + (1 − g)·F2 with one gate
// per row; the F1 half of each row's logit is taken in the first pass.
Status gated_rk2(Step& step, const Tensor& f1, Tensor& next, float* acc) {
  SEQRT_ASSIGN_OR_RETURN(Tensor w, load_f32(*step.ctx.input(1)));
  float bias = static_cast<float>(step.ctx.input(2)->element_f64(0));
  const int64_t rows = step.setup.positions;
  const size_t width = static_cast<size_t>(step.setup.width);
  const float* pw = w.data_as<float>();
  const float* py = step.y.data_as<float>();
  const float* p1 = f1.data_as<float>();
  float* pn = next.mutable_data_as<float>();
  std::vector<float> logit(static_cast<size_t>(rows));
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<size_t>(width, 1));
  parallel_chunks(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      size_t o = static_cast<size_t>(r) * width;
      rk_stage_pass_f32(py + o, p1 + o, 1.0f, pn + o, nullptr, 0.0f, nullptr,
                        width);
      logit[r] = bias + dot(p1 + o, pw, width);
    }
  });
  SEQRT_ASSIGN_OR_RETURN(Tensor f2, evaluate(step, 2, next));
  const float* p2 = f2.data_as<float>();
  parallel_chunks(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      size_t o = static_cast<size_t>(r) * width;
      float g = sigmoid(logit[r] + dot(p2 + o, pw + width, width));
      rk_gated_row_f32(py + o, p1 + o, p2 + o, g, acc + o, width);
    }
  });
  return Status::ok();
}

// rk4 with c = (½, ½, 1) and b = (1, 2, 2, 1)/6; `next` is reused as every
// stage's input (a body returning its input aliases it, which the
// elementwise pass allows).
Status rk4(Step& step, Tensor f, Tensor& next, float* acc) {
  const float* py = step.y.data_as<float>();
  const float c[] = {0.5f, 0.5f, 1.0f};
  const float b[] = {1.0f / 6, 2.0f / 6, 2.0f / 6, 1.0f / 6};
  for (int stage = 2; stage <= 4; ++stage) {
    const float* acc_in = stage == 2 ? py : acc;
    stage_pass(step, f, c[stage - 2], &next, acc_in, b[stage - 2], acc);
    SEQRT_ASSIGN_OR_RETURN(f, evaluate(step, stage, next));
  }
  stage_pass(step, f, 0.0f, nullptr, acc, b[3], acc);
  return Status::ok();
}

Status run_runge_kutta(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(RungeKuttaSetup setup, check_runge_kutta(ctx));
  const Tensor& y_in = *ctx.input(0);
  if (!is_f32_family(y_in.dtype())) {
    return ctx.unsupported_error(
        "{} input: the CPU backend computes f32/f16/bf16 only",
        dtype_name(y_in.dtype()));
  }
  Step step{ctx, setup, y_in, Tensor(), 0};
  SEQRT_ASSIGN_OR_RETURN(step.y, load_f32(y_in));
  step.n = static_cast<size_t>(y_in.num_elements());
  SEQRT_ASSIGN_OR_RETURN(Tensor acc,
                         f32_output(ctx, 0, y_in.dtype(), y_in.dims()));
  float* pacc = acc.mutable_data_as<float>();
  const float* py = step.y.data_as<float>();
  SEQRT_ASSIGN_OR_RETURN(Tensor f1, evaluate(step, 1, step.y));
  Tensor next;
  if (setup.method != RungeKuttaMethod::kEuler) {
    SEQRT_ASSIGN_OR_RETURN(next, Tensor::allocate(DType::kF32, y_in.dims()));
  }
  switch (setup.method) {
    case RungeKuttaMethod::kEuler:
      stage_pass(step, f1, 0.0f, nullptr, py, 1.0f, pacc);
      break;
    case RungeKuttaMethod::kRk2: {
      stage_pass(step, f1, 1.0f, &next, py, 0.5f, pacc);
      SEQRT_ASSIGN_OR_RETURN(Tensor f2, evaluate(step, 2, next));
      stage_pass(step, f2, 0.0f, nullptr, pacc, 0.5f, pacc);
      break;
    }
    case RungeKuttaMethod::kRk2Gated:
      SEQRT_RETURN_IF_ERROR(gated_rk2(step, f1, next, pacc));
      break;
    case RungeKuttaMethod::kRk4:
      SEQRT_RETURN_IF_ERROR(rk4(step, std::move(f1), next, pacc));
      break;
  }
  return set_output_as(ctx, 0, acc, y_in.dtype());
}

Status supports_runge_kutta(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_runge_kutta_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "RungeKutta", run_runge_kutta,
                      supports_runge_kutta});
}

}  // namespace seqrt::cpu
