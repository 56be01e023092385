#!/bin/sh
# `seqrt run MODEL --backend cuda`: where no CUDA driver or device exists it
# must exit non-zero with one clear line naming the cuda backend, and the
# same model must still run on the CPU afterwards (`generate`, which feeds
# the model's tokens and state itself).
# Usage: cli_run_test.sh SEQRT_BINARY MODEL
set -u
seqrt=$1
model=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if "$seqrt" run "$model" --backend cuda >/dev/null 2>"$err"; then
  echo "ran on a CUDA device"
else
  lines=$(grep -c . "$err")
  cat "$err"
  if [ "$lines" -ne 1 ] || ! grep -q "cuda backend: " "$err"; then
    echo "FAIL: expected one line naming the cuda backend, got $lines" >&2
    exit 1
  fi
fi
"$seqrt" generate "$model" --prompt "It is" --backend cpu --max-tokens 2 \
  --seed 1 >/dev/null || {
  echo "FAIL: the cpu backend no longer runs the model" >&2
  exit 1
}
echo "ok"
