#!/usr/bin/env bash
# Installs dependencies, builds seqrt (Debug, warnings as errors) and runs
# the whole test suite with ctest. This is exactly what CI runs (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$(nproc)"
ctest --preset dev -j"$(nproc)"
