#!/bin/sh
# Builds the CUDA plugin and its kernel benchmark in release mode, runs the
# GPU tests, then the benchmarks beside PyTorch. Run from the repository
# root on a machine with an NVIDIA GPU (H100/H200 class), nvcc and PyTorch.
# Usage: bench/cuda/run_gpu.sh [--quick]
set -eu
build=${SEQRT_CUDA_BUILD_DIR:-build/cuda-release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSEQRT_BUILD_PYTHON=OFF -DSEQRT_BUILD_BENCH=ON
cmake --build "$build" -j"$(nproc)" --target seqrt_cuda seqrt_cuda_kernel_bench \
  cuda_tiling_test cuda_copy_plan_test cuda_shape_plan_test cuda_kernel_plan_test cuda_plugin_test \
  conformance_test onnx_node_runner seqrt
# The benchmarks run even when a test fails; the exit code reports both.
status=0
ctest --test-dir "$build" -R 'Cuda|cuda' --output-on-failure || status=$?
"$build/bench/cuda/seqrt_cuda_kernel_bench" "$@"
python3 bench/cuda/torch_reference.py "$@"
exit "$status"
