#!/usr/bin/env bash
# Installs dependencies, builds seqrt in release mode and runs the sample
# model (samples/models/make_tiny_mlp) on the CPU with the seqrt CLI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/install-deps.sh
cmake --preset release -DSEQRT_BUILD_TESTS=OFF -DSEQRT_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release -j"$(nproc)"
out=build/release/demo
mkdir -p "$out"
build/release/samples/make_tiny_mlp "$out"
build/release/tools/seqrt inspect "$out/tiny_mlp.seqrt"
build/release/tools/seqrt run "$out/tiny_mlp.seqrt" --backend reference \
  --input "tokens=$out/tokens.npy" --repeat 5
# The same model on the CPU backend's vectorised kernels.
build/release/tools/seqrt run "$out/tiny_mlp.seqrt" --backend cpu \
  --input "tokens=$out/tokens.npy" --repeat 5
