#include "backends/cuda/kernels/neural_memory.h"

namespace seqrt::cuda {
namespace {

struct Launch {
  int momentum_per_thread;
  bool anchor_stored;
};

// Exact GELU x·Φ(x) or SiLU x·σ(x), and the derivative (ops/sequence/
// neural_memory.h has the reference's fp64 forms).
__device__ float activation(float x, bool gelu) {
  if (gelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  return x / (1.0f + expf(-x));
}

__device__ float activation_derivative(float x, bool gelu) {
  if (gelu) {
    const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    const float pdf = 0.39894228040143267794f * expf(-0.5f * x * x);
    return cdf + x * pdf;
  }
  const float sigmoid = 1.0f / (1.0f + expf(-x));
  return sigmoid * (1.0f + x * (1.0f - sigmoid));
}

// hidden[j] = act(Σ_i x[i]·W1[i, j]) for j < m (W1 row-major (d, m)) and,
// when wanted, act' at the same point; one thread per j, W1 rows read
// across consecutive threads.
__device__ void first_layer(const float* w1, const float* x, int d, int m,
                            bool gelu, float* hidden, float* derivative) {
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    float h = 0.0f;
    for (int i = 0; i < d; ++i) h += x[i] * w1[i * m + j];
    hidden[j] = activation(h, gelu);
    if (derivative != nullptr) derivative[j] = activation_derivative(h, gelu);
  }
}

// out[l] = Σ_j a[j]·W2[j, l] (W2 row-major (m, d)).
__device__ float second_layer(const float* w2, const float* a, int m, int d,
                              int l) {
  float o = 0.0f;
  for (int j = 0; j < m; ++j) o += a[j] * w2[j * d + l];
  return o;
}

// y = M(x) with the weights `w` into global `y`; `hidden` is scratch.
__device__ void retrieve(const float* w, const float* x, int d, int m,
                         bool depth2, bool gelu, float* hidden, float* y) {
  if (!depth2) {
    for (int l = threadIdx.x; l < d; l += blockDim.x) {
      float o = 0.0f;
      for (int i = 0; i < d; ++i) o += x[i] * w[i * d + l];
      y[l] = o;
    }
    return;
  }
  first_layer(w, x, d, m, gelu, hidden, nullptr);
  __syncthreads();
  for (int l = threadIdx.x; l < d; l += blockDim.x) {
    y[l] = second_layer(w + d * m, hidden, m, d, l);
  }
}

// The loss gradient's factors at the anchor weights for token (k, v):
// r = 2(M(k) − v) always; for depth 2 also a = act(k·W1) and
// dh = (r·W2ᵀ) ⊙ act'(k·W1), so ∇W1 = kᵀ dh and ∇W2 = aᵀ r.
__device__ void gradient_factors(const float* anchor, const float* k,
                                 const float* v, int d, int m, bool depth2,
                                 bool gelu, float* r, float* a, float* dh) {
  if (!depth2) {
    for (int l = threadIdx.x; l < d; l += blockDim.x) {
      float o = 0.0f;
      for (int i = 0; i < d; ++i) o += k[i] * anchor[i * d + l];
      r[l] = 2.0f * (o - v[l]);
    }
    __syncthreads();
    return;
  }
  first_layer(anchor, k, d, m, gelu, a, dh);
  __syncthreads();
  const float* w2 = anchor + d * m;
  for (int l = threadIdx.x; l < d; l += blockDim.x) {
    r[l] = 2.0f * (second_layer(w2, a, m, d, l) - v[l]);
  }
  __syncthreads();
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    // Row j of W2 read from a column that differs per thread, so a warp's
    // threads hit different banks when d is a multiple of 32.
    float back = 0.0f;
    for (int c = 0; c < d; ++c) {
      const int l = (c + j) % d;
      back += r[l] * w2[j * d + l];
    }
    dh[j] *= back;
  }
  __syncthreads();
}

// Grid (heads, batch); `launch.momentum_per_thread` momentum values per
// thread in registers (thread i owns p = i + r·blockDim) or, when 0, the
// momentum in shared memory.
template <bool kRegisters>
__global__ void __launch_bounds__(1024)
    neural_memory_kernel(NeuralMemoryArgs a, Launch launch) {
  extern __shared__ float shared[];
  const int d = static_cast<int>(a.d);
  const int m = static_cast<int>(a.m);
  const bool depth2 = a.depth == 2;
  const int width = depth2 ? m : d;
  const int params = depth2 ? 2 * d * m : d * d;
  float* w = shared;
  float* anchor = launch.anchor_stored ? w + params : w;
  float* s_momentum = launch.anchor_stored ? anchor + params : w + params;
  float* s_k = kRegisters ? s_momentum : s_momentum + params;
  float* s_v = s_k + d;
  float* s_q = s_v + d;
  float* s_r = s_q + d;
  float* s_a = s_r + d;
  float* s_dh = s_a + width;
  float* s_hidden = s_dh + width;
  float* s_scalar = s_hidden + width;

  const int64_t h = blockIdx.x;
  const int64_t b = blockIdx.y;
  const int64_t row = b * a.heads + h;
  const float* past =
      a.past_state != nullptr ? a.past_state + row * 3 * params : nullptr;
  float* present =
      a.present_state != nullptr ? a.present_state + row * 3 * params : nullptr;

  for (int p = threadIdx.x; p < params; p += blockDim.x) {
    if (past != nullptr) {
      w[p] = past[p];
    } else {
      w[p] = p < d * width ? a.w1[h * d * width + p]
                           : a.w2[h * m * d + (p - d * m)];
    }
    if (launch.anchor_stored) {
      anchor[p] = past != nullptr ? past[2 * params + p] : w[p];
    }
    if (!kRegisters) s_momentum[p] = past != nullptr ? past[params + p] : 0.0f;
  }
  float reg[kRegisters ? kMaxMomentumPerThread : 1];
  auto momentum = [&](int r, int p) -> float& {
    if constexpr (kRegisters) {
      return reg[r];
    } else {
      return s_momentum[p];
    }
  };
  // A compile-time bound in registers, so the array is never indexed
  // dynamically (which would move it to local memory).
  const int bound = kRegisters ? kMaxMomentumPerThread : 1;
  if constexpr (kRegisters) {
#pragma unroll
    for (int r = 0; r < bound; ++r) {
      const int p = threadIdx.x + r * blockDim.x;
      reg[r] = r < launch.momentum_per_thread && p < params && past != nullptr
                   ? past[params + p]
                   : 0.0f;
    }
  }
  const int64_t position = a.position != nullptr ? a.position[b] : 0;
  __syncthreads();

  for (int64_t t = 0; t < a.steps; ++t) {
    const int64_t token = row * a.steps + t;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
      s_k[i] = a.k[token * d + i];
      s_v[i] = a.v[token * d + i];
      s_q[i] = a.q[token * d + i];
    }
    if (threadIdx.x == 0) {
      s_scalar[0] = a.theta[token];
      s_scalar[1] = a.eta[token];
      s_scalar[2] = a.alpha[token];
    }
    // The anchor is the weights at the start of the token's chunk (chunks
    // aligned to absolute positions); with chunk 1 it is the weights
    // themselves, and the last token's anchor goes to the state here.
    if (launch.anchor_stored && (position + t) % a.chunk == 0) {
      for (int p = threadIdx.x; p < params; p += blockDim.x) anchor[p] = w[p];
    }
    if (!launch.anchor_stored && t == a.steps - 1 && present != nullptr) {
      for (int p = threadIdx.x; p < params; p += blockDim.x) {
        present[2 * params + p] = w[p];
      }
    }
    __syncthreads();
    float* y = a.out + token * d;
    if (a.retrieve_before) {
      retrieve(w, s_q, d, m, depth2, a.gelu, s_hidden, y);
    }
    gradient_factors(anchor, s_k, s_v, d, m, depth2, a.gelu, s_r, s_a, s_dh);
    const float theta = s_scalar[0];
    const float eta = s_scalar[1];
    const float keep = 1.0f - s_scalar[2];
    // S_t = eta·S − theta·∇, M_t = (1 − alpha)·M + S_t, elementwise.
    auto update = [&](int r, int p) {
      float grad;
      if (!depth2) {
        grad = s_k[p / d] * s_r[p % d];
      } else if (p < d * m) {
        grad = s_k[p / m] * s_dh[p % m];
      } else {
        grad = s_a[(p - d * m) / d] * s_r[(p - d * m) % d];
      }
      float& s = momentum(r, p);
      s = eta * s - theta * grad;
      w[p] = keep * w[p] + s;
    };
    if constexpr (kRegisters) {
#pragma unroll
      for (int r = 0; r < bound; ++r) {
        const int p = threadIdx.x + r * blockDim.x;
        if (r < launch.momentum_per_thread && p < params) update(r, p);
      }
    } else {
      for (int p = threadIdx.x; p < params; p += blockDim.x) update(0, p);
    }
    __syncthreads();
    if (!a.retrieve_before) {
      retrieve(w, s_q, d, m, depth2, a.gelu, s_hidden, y);
    }
    // The next token overwrites the staging and the hidden vector.
    __syncthreads();
  }
  if (present == nullptr) return;
  for (int p = threadIdx.x; p < params; p += blockDim.x) {
    present[p] = w[p];
    if (launch.anchor_stored) {
      present[2 * params + p] = anchor[p];
    } else if (a.steps == 0) {
      present[2 * params + p] = past != nullptr ? past[2 * params + p] : w[p];
    }
    if (!kRegisters) present[params + p] = s_momentum[p];
  }
  if constexpr (kRegisters) {
#pragma unroll
    for (int r = 0; r < bound; ++r) {
      const int p = threadIdx.x + r * blockDim.x;
      if (r < launch.momentum_per_thread && p < params) {
        present[params + p] = reg[r];
      }
    }
  }
}

template <bool kRegisters>
cudaError_t launch_typed(const NeuralMemoryArgs& args,
                         const NeuralMemoryTiling& tiling, dim3 grid,
                         cudaStream_t stream) {
  if (tiling.shared_bytes > 48 * 1024) {
    cudaError_t error =
        cudaFuncSetAttribute(neural_memory_kernel<kRegisters>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(tiling.shared_bytes));
    if (error != cudaSuccess) return error;
  }
  Launch launch{tiling.momentum_per_thread, tiling.anchor_stored};
  neural_memory_kernel<kRegisters>
      <<<grid, tiling.threads, tiling.shared_bytes, stream>>>(args, launch);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_neural_memory(const NeuralMemoryArgs& args,
                                 const NeuralMemoryTiling& tiling,
                                 cudaStream_t stream) {
  if (args.batch == 0 || args.heads == 0) return cudaSuccess;
  if (args.heads > 2147483647 || args.batch > 65535) {
    return cudaErrorInvalidConfiguration;
  }
  // The planner's choice must match these sizes (and the kernel's layout).
  if (tiling.shared_bytes <
      neural_memory_shared_bytes(args.d, args.m, args.depth,
                                 tiling.anchor_stored, tiling.momentum_home)) {
    return cudaErrorInvalidValue;
  }
  dim3 grid(static_cast<unsigned>(args.heads),
            static_cast<unsigned>(args.batch));
  return tiling.momentum_home == StateHome::kRegisters
             ? launch_typed<true>(args, tiling, grid, stream)
             : launch_typed<false>(args, tiling, grid, stream);
}

}  // namespace seqrt::cuda
