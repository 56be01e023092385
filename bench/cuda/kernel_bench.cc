// Kernel benchmarks of the CUDA backend on device-resident buffers, timed
// with CUDA events: SelectiveScan in GB/s beside the device's measured
// copy bandwidth (the roofline), SSD (recurrent and chunkwise) and
// Retention likewise, elementwise and row kernels in GB/s, and
// the cuBLASLt GEMM in TFLOP/s. Usage: seqrt_cuda_kernel_bench [--quick]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "backends/cuda/kernels/chunkwise.h"
#include "backends/cuda/kernels/column_scan.h"
#include "backends/cuda/kernels/elementwise.h"
#include "backends/cuda/kernels/gemm.h"
#include "backends/cuda/kernels/rows.h"
#include "backends/cuda/kernels/selective_scan.h"
#include "backends/cuda/tiling.h"

namespace {

using namespace seqrt::cuda;

bool ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "cuda_kernel_bench: %s: %s\n", what,
               cudaGetErrorString(error));
  return false;
}

// Device buffer of n floats filled with small values (0.01 steps).
float* device_floats(size_t n) {
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = 0.01f * static_cast<float>(i % 97) - 0.3f;
  float* data = nullptr;
  if (!ok(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(float)),
          "cudaMalloc")) {
    return nullptr;
  }
  ok(cudaMemcpy(data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
     "cudaMemcpy");
  return data;
}

// Mean time of `repeat` runs after one warm-up, in milliseconds.
double time_ms(const std::function<cudaError_t()>& run, int repeat) {
  if (!ok(run(), "warm-up")) return -1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  for (int i = 0; i < repeat; ++i) {
    if (!ok(run(), "run")) return -1;
  }
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / repeat;
}

DeviceLimits limits_of_device() {
  cudaDeviceProp props;
  cudaGetDeviceProperties(&props, 0);
  DeviceLimits limits;
  limits.sm_major = props.major;
  limits.sm_minor = props.minor;
  limits.multiprocessors = props.multiProcessorCount;
  limits.shared_per_block = static_cast<uint32_t>(props.sharedMemPerBlock);
  limits.shared_per_block_optin =
      static_cast<uint32_t>(props.sharedMemPerBlockOptin);
  std::printf("device: %s, %d SMs, %zu MiB\n", props.name,
              props.multiProcessorCount, props.totalGlobalMem >> 20);
  return limits;
}

// The achievable bandwidth: a device-to-device copy reads and writes.
double copy_bandwidth_gbs(size_t bytes) {
  void* a = nullptr;
  void* b = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  double ms = time_ms(
      [&] { return cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); },
      20);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes / (ms * 1e6);
}

void bench_selective_scan(const DeviceLimits& limits, double roofline,
                          bool quick) {
  // The goal's shape: D = 5120, N = 16, L = 2048, B = 8 (B = 1 if quick).
  SelectiveScanArgs args;
  args.batch = quick ? 1 : 8;
  args.channels = 5120;
  args.groups = 1;
  args.state_size = 16;
  args.length = 2048;
  size_t bdl = args.batch * args.channels * args.length;
  size_t bgnl = args.batch * args.groups * args.state_size * args.length;
  args.u = device_floats(bdl);
  args.delta = device_floats(bdl);
  args.z = device_floats(bdl);
  args.a = device_floats(args.channels * args.state_size);
  args.b = device_floats(bgnl);
  args.c = device_floats(bgnl);
  args.d_skip = device_floats(args.channels);
  args.delta_bias = device_floats(args.channels);
  float* y = device_floats(bdl);
  float* state = device_floats(args.batch * args.channels * args.state_size);
  args.y = y;
  args.present_state = state;
  auto tiling = plan_selective_scan(limits, args.channels, args.state_size);
  if (!tiling.is_ok()) {
    std::printf("SelectiveScan: %s\n", tiling.status().to_string().c_str());
    return;
  }
  double ms = time_ms([&] { return launch_selective_scan(args, *tiling, 0); },
                      quick ? 3 : 10);
  double bytes = 4.0 * (4 * bdl + 2 * bgnl);  // u, Δ, z, y, B, C
  std::printf(
      "SelectiveScan B=%lld D=5120 N=16 L=2048: %.3f ms, %.1f GB/s "
      "(%.0f%% of %.0f GB/s)\n  %s\n",
      static_cast<long long>(args.batch), ms, bytes / (ms * 1e6),
      100.0 * bytes / (ms * 1e6) / roofline, roofline,
      tiling->describe().c_str());
}

// A row-major (B, heads, T, width) tensor read per (b, head).
ScanView per_head(const float* data, int64_t heads, int64_t steps,
                  int64_t width) {
  ScanView view;
  view.data = data;
  view.batch = heads * steps * width;
  view.head = steps * width;
  view.step = width;
  return view;
}

// A packed (B, T, heads·width) tensor read per (b, head).
ScanView packed(const float* data, int64_t heads, int64_t steps,
                int64_t width) {
  ScanView view;
  view.data = data;
  view.batch = steps * heads * width;
  view.head = width;
  view.step = heads * width;
  return view;
}

void time_column_scan(const char* name, const DeviceLimits& limits,
                      const ColumnScanArgs& args, int64_t chunk, double bytes,
                      double roofline, bool quick) {
  auto tiling =
      plan_column_scan(limits, args.rows, args.cols, args.queries, chunk);
  if (!tiling.is_ok()) {
    std::printf("%s: %s\n", name, tiling.status().to_string().c_str());
    return;
  }
  double ms = time_ms([&] { return launch_column_scan(args, *tiling, 0); },
                      quick ? 3 : 10);
  std::printf("%s: %.3f ms, %.1f GB/s (%.0f%% of %.0f GB/s)\n  %s\n", name, ms,
              bytes / (ms * 1e6), 100.0 * bytes / (ms * 1e6) / roofline,
              roofline, tiling->describe().c_str());
}

// SSD (Mamba-2 2.7B layer: H = 80 heads of P = 64, N = 128, G = 1,
// L = 2048) through the column scan and the chunkwise form, and the
// Retention recurrence (H = 16, dk = dv = 128, T = 4096), in GB/s of their
// inputs and outputs; batch 4 (1 if quick).
void bench_column_scan(const DeviceLimits& limits, double roofline,
                       bool quick) {
  const int64_t batch = quick ? 1 : 4;
  {
    const int64_t l = 2048, h = 80, p = 64, n = 128, g = 1;
    const size_t blhp = batch * l * h * p, blgn = batch * l * g * n;
    ColumnScanArgs args;
    args.batch = batch;
    args.heads = h;
    args.steps = l;
    args.rows = n;
    args.cols = p;
    args.key = packed(device_floats(blgn), g, l, n);
    args.key.head_divisor = h / g;
    args.query = packed(device_floats(blgn), g, l, n);
    args.query.head_divisor = h / g;
    args.value = packed(device_floats(blhp), h, l, p);
    args.decay = packed(device_floats(batch * l * h), h, l, 1);
    args.decay.index = 0;
    args.decay_kind = ScanDecay::kSsd;
    args.ssd_a = device_floats(h);
    args.dt_bias = device_floats(h);
    args.dt_max = 1e30f;
    args.skip = device_floats(h);
    args.gate = device_floats(blhp);
    args.out = device_floats(blhp);
    args.out_batch = l * h * p;
    args.out_head = p;
    args.out_step = h * p;
    args.present_state = device_floats(batch * h * p * n);
    args.state_row = 1;
    args.state_col = n;
    double bytes = 4.0 * (3 * blhp + 2 * blgn + batch * l * h);
    time_column_scan("SSD recurrence L=2048 H=80 P=64 N=128", limits, args, 256,
                     bytes, roofline, quick);
    // The same problem in the chunkwise form (what prefill runs).
    ChunkwiseArgs chunked;
    chunked.batch = args.batch;
    chunked.heads = h;
    chunked.steps = l;
    chunked.rows = n;
    chunked.cols = p;
    chunked.key = args.key;
    chunked.query = args.query;
    chunked.value = args.value;
    chunked.log_decay = args.decay;
    chunked.ssd = true;
    chunked.ssd_a = args.ssd_a;
    chunked.dt_bias = args.dt_bias;
    chunked.dt_max = args.dt_max;
    chunked.skip = args.skip;
    chunked.gate = args.gate;
    chunked.out = args.out;
    chunked.out_batch = args.out_batch;
    chunked.out_head = args.out_head;
    chunked.out_step = args.out_step;
    chunked.present_state = args.present_state;
    chunked.state_row = 1;
    chunked.state_col = n;
    auto tiling = plan_chunked_state(limits, n, p, 1, 256);
    if (!tiling.is_ok()) {
      std::printf("SSD chunkwise: %s\n", tiling.status().to_string().c_str());
      return;
    }
    double ms = time_ms([&] { return launch_chunkwise(chunked, *tiling, 0); },
                        quick ? 3 : 10);
    std::printf(
        "SSD chunkwise L=2048 H=80 P=64 N=128: %.3f ms, %.1f GB/s (%.0f%% of "
        "%.0f GB/s)\n  %s\n",
        ms, bytes / (ms * 1e6), 100.0 * bytes / (ms * 1e6) / roofline, roofline,
        tiling->describe().c_str());
  }
  {
    const int64_t t = 4096, h = 16, d = 128;
    const size_t bhtd = batch * h * t * d;
    ColumnScanArgs args;
    args.batch = batch;
    args.heads = h;
    args.steps = t;
    args.rows = d;
    args.cols = d;
    args.query = per_head(device_floats(bhtd), h, t, d);
    args.key = per_head(device_floats(bhtd), h, t, d);
    args.value = per_head(device_floats(bhtd), h, t, d);
    args.decay.data = device_floats(h);
    args.decay.head = 1;
    args.decay.step = 0;
    args.decay_kind = ScanDecay::kMultiply;
    args.key_scale = 0.088f;
    args.out = device_floats(bhtd);
    args.out_batch = h * t * d;
    args.out_head = t * d;
    args.out_step = d;
    args.present_state = device_floats(batch * h * d * d);
    args.state_row = d;
    time_column_scan("Retention H=16 T=4096 dk=dv=128", limits, args, 64,
                     4.0 * 4 * bhtd, roofline, quick);
  }
}

void bench_rows_and_elementwise(double roofline) {
  const int64_t rows = 16384;
  const int64_t cols = 4096;
  const int64_t n = rows * cols;
  float* x = device_floats(n);
  float* w = device_floats(cols);
  float* y = device_floats(n);
  double ms = time_ms(
      [&] { return launch_softmax_rows(x, y, rows, cols, false, 0); }, 20);
  std::printf("Softmax %lldx%lld: %.3f ms, %.1f GB/s (roofline %.0f)\n",
              static_cast<long long>(rows), static_cast<long long>(cols), ms,
              8.0 * n / (ms * 1e6), roofline);
  ms = time_ms(
      [&] { return launch_layer_norm_rows(x, w, w, y, rows, cols, 1e-5f, 0); },
      20);
  std::printf("LayerNormalization %lldx%lld: %.3f ms, %.1f GB/s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), ms,
              8.0 * n / (ms * 1e6));
  BroadcastIndex index;
  index.rank = 2;
  index.dims[0] = rows;
  index.dims[1] = cols;
  index.a_strides[0] = cols;
  index.a_strides[1] = 1;
  index.b_strides[1] = 1;  // a row vector broadcast over rows
  ms = time_ms(
      [&] { return launch_binary(BinaryOp::kAdd, x, w, y, index, n, 0); }, 20);
  std::printf("Add (broadcast row) %lldx%lld: %.3f ms, %.1f GB/s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), ms,
              8.0 * n / (ms * 1e6));
}

void bench_gemm() {
  cublasLtHandle_t handle;
  cublasLtCreate(&handle);
  for (int64_t size : {1024, 4096}) {
    float* a = device_floats(size * size);
    float* b = device_floats(size * size);
    float* c = device_floats(size * size);
    double ms = time_ms(
        [&] {
          seqrt::Status status =
              gemm_f32(handle, 0, a, b, c, size, size, size, 1, 0, 0, 0);
          return status.is_ok() ? cudaSuccess : cudaErrorUnknown;
        },
        10);
    std::printf("GEMM f32 %lld^3 (cuBLASLt, no TF32): %.3f ms, %.1f TFLOP/s\n",
                static_cast<long long>(size), ms,
                2.0 * size * size * size / (ms * 1e9));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  cublasLtDestroy(handle);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::fprintf(stderr, "cuda_kernel_bench: no CUDA device (%s)\n",
                 error != cudaSuccess ? cudaGetErrorName(error) : "0 devices");
    return 77;
  }
  DeviceLimits limits = limits_of_device();
  double roofline = copy_bandwidth_gbs(size_t(1) << 30);
  std::printf("device copy bandwidth (roofline): %.0f GB/s\n", roofline);
  bench_selective_scan(limits, roofline, quick);
  bench_column_scan(limits, roofline, quick);
  bench_rows_and_elementwise(roofline);
  bench_gemm();
  return 0;
}
