#!/usr/bin/env bash
# The whole test suite: exactly what CI runs (.ci/run). Stages, each timed in
# the log (tests/README.md says what each covers and what it costs):
#   deps        Debian packages (scripts/deps-debian.txt)
#   asan build  clang, AddressSanitizer + UndefinedBehaviorSanitizer,
#               assertions on: every test, the fuzz targets, the samples
#   asan tests  ctest: the whole suite once, fuzzers and corrupt-input sweep
#   gcc build   Debug with gcc (target ci_gcc): the CLI, libseqrt.so, the
#               Python extension, the benchmarks, the CUDA plugin
#   gcc tests   ctest -L cuda: the tests that load the CUDA plugin
#   python      pytest in a venv against the gcc build: python/tests
#               (seqrt.export vs onnxruntime and PyTorch) and the model zoo
#               (tests/zoo/, real exports vs onnxruntime; a zoo build makes
#               build/venv-torch2 for the torch 2.x exports when missing)
#   tsan        ThreadSanitizer, with the OpenMP threads: the concurrency
#               tests, the CPU kernels' tests and conformance_cpu
# Objects are cached by ccache outside the checkout, so a machine that built
# this tree before (in any folder) rebuilds little.
#
# SEQRT_TEST_BUDGET_MINUTES (default 75): the run fails, saying so, once its
# total passes the budget, so that a change that slows CI towards its
# 90-minute limit is caught while it still lands.
# SEQRT_REQUIRE_BACKENDS (default reference,cpu,vulkan): backends whose
# tests must not skip for want of a device (tests/device_skip.h).
# SEQRT_TEST_SANITIZERS=0: a quicker local run, the whole suite in the gcc
# Debug build and no sanitizer stages.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export SEQRT_REQUIRE_BACKENDS="${SEQRT_REQUIRE_BACKENDS-reference,cpu,vulkan}"
budget_s=$((${SEQRT_TEST_BUDGET_MINUTES:-75} * 60))
jobs="$(nproc)"
start=$SECONDS

# stage NAME COMMAND...: runs it, prints its wall time and the total, and
# fails the run past the budget.
stage() {
  local name=$1 began=$SECONDS
  shift
  echo "=== test.sh: stage '$name'"
  "$@"
  local total=$((SECONDS - start))
  echo "=== test.sh: stage '$name' took $((SECONDS - began)) s (total ${total} s)"
  if ((total > budget_s)); then
    echo "test.sh: FAIL: the suite took ${total} s, over its budget of" \
      "${budget_s} s (SEQRT_TEST_BUDGET_MINUTES); CI stops at 90 minutes," \
      "so make the change cheaper to test (tests/README.md)" >&2
    exit 1
  fi
}

build() { # build PRESET [TARGET]
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j"$jobs" ${2:+--target "$2"}
}

python_tests() {
  # A venv over Debian's python3 that sees its torch 1.13; pip's download
  # cache is kept, so later runs install from it.
  local venv=build/venv
  if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
    /usr/bin/python3 -m venv --clear --system-site-packages "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    -r python/requirements-test.txt
  # The package with its C++ extension seqrt._seqrt, built in build/dev
  # rather than in a fresh Release build of its own.
  SEQRT_BUILD_DIR="$root/build/dev" "$venv/bin/pip" install --quiet \
    --disable-pip-version-check --no-build-isolation --no-deps ./python
  SEQRT_CLI="${SEQRT_CLI:-$root/build/dev/tools/seqrt}" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
  # A session of its own: both folders have a conftest.py, and one pytest
  # session imports only the first as the module 'conftest'.
  # Building the zoo (when ~/.cache/seqrt has none for these scripts) makes
  # build/venv-torch2 too, once: about 3 GB from the package index.
  SEQRT_CLI="${SEQRT_CLI:-$root/build/dev/tools/seqrt}" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/zoo
}

stage deps scripts/install-deps.sh
if [[ "${SEQRT_TEST_SANITIZERS:-1}" == 0 ]]; then
  stage "gcc build" build dev
  stage "gcc tests" ctest --preset dev -j"$jobs"
  stage python python_tests
  exit 0
fi
stage "asan build" build asan
stage "asan tests" ctest --preset asan -j"$jobs"
stage "gcc build" build dev ci_gcc
stage "gcc tests" ctest --preset dev -j"$jobs" -L cuda
stage python python_tests
# The binaries of the tests labelled "tsan", which the preset picks.
tsan() {
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$jobs" --target concurrency_test \
    cpu_backend_test c_api_test conformance_test
  ctest --preset tsan -j"$jobs"
}
stage tsan tsan
echo "test.sh: all stages passed in $((SECONDS - start)) s"
