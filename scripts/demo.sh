#!/usr/bin/env bash
# Installs dependencies, builds seqrt in release mode, runs the tiny sample
# model (samples/models/make_tiny_mlp) with the seqrt CLI, then the demo:
# the small hybrid language model of samples/demo (Mamba, attention and
# Titans memory layers, trained on Jane Austen) generating text on the CPU.
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
# The demo: prefill the prompt, then decode 300 characters one run each.
build/release/tools/seqrt generate samples/demo/austen.seqrt \
  --prompt "It is a truth universally acknowledged" --backend cpu \
  --max-tokens 300 --seed 1
