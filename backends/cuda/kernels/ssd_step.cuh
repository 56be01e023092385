// SSD's step size in device code, shared by the recurrent (column_scan.cu)
// and chunkwise (chunkwise.cu) forms so both follow OPS.md identically:
// Δ = clamp(softplus(dt + dt_bias), dt_min, dt_max), softplus optional and
// Mamba's (log1p(exp x) up to 20, x beyond).
#pragma once

namespace seqrt::cuda {

__device__ inline float mamba_softplus(float x) {
  return x <= 20.0f ? log1pf(expf(x)) : x;
}

__device__ inline float ssd_step_size(float dt, float bias, bool softplus,
                                      float dt_min, float dt_max) {
  float delta = dt + bias;
  if (softplus) delta = mamba_softplus(delta);
  return fminf(fmaxf(delta, dt_min), dt_max);
}

}  // namespace seqrt::cuda
