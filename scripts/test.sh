#!/usr/bin/env bash
# Installs dependencies, builds seqrt (Debug, warnings as errors) and runs
# the whole test suite with ctest, then the Python package's pytest suite
# (seqrt.export cross-checked against onnxruntime and PyTorch) in a venv,
# This is exactly what CI runs (.ci/run).
# Then the sanitizer runs: the whole suite again built with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer (which also builds and runs
# the libFuzzer targets, tests/fuzz, and the corrupt-input sweep), and the
# concurrency tests under ThreadSanitizer (tests/sanitizers/README.md).
# SEQRT_TEST_SANITIZERS=0 leaves them out for a quicker local run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$(nproc)"
ctest --preset dev -j"$(nproc)"

# Python (python/): a venv over Debian's python3 that sees its torch 1.13;
# pip's download cache is kept, so later runs install from it.
venv=build/venv
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  /usr/bin/python3 -m venv --clear --system-site-packages "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  -r python/requirements-test.txt
# The package with its C++ extension seqrt._seqrt, built in build/dev
# (just built above) rather than in a fresh Release build of its own.
SEQRT_BUILD_DIR="$root/build/dev" "$venv/bin/pip" install --quiet \
  --disable-pip-version-check --no-build-isolation --no-deps ./python
SEQRT_CLI="${SEQRT_CLI:-$root/build/dev/tools/seqrt}" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests

if [[ "${SEQRT_TEST_SANITIZERS:-1}" != 0 ]]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$(nproc)"
  ctest --preset asan -j"$(nproc)"
  # Only the concurrency test binaries: the preset's filter picks their tests.
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$(nproc)" --target concurrency_test \
    cpu_backend_test c_api_test
  ctest --preset tsan -j"$(nproc)"
fi
