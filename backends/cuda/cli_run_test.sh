#!/bin/sh
# `seqrt run MODEL --backend cuda` against `--backend cpu` on the same
# tokens: every output must agree within 1e-3 + 1e-3 |cpu|. Where this
# machine has no CUDA driver or GPU, the cuda run must end in one line
# naming the cuda backend and the test skips loudly (exit 77: ctest lists it
# as skipped), unless SEQRT_REQUIRE_BACKENDS names cuda.
# Usage: cli_run_test.sh SEQRT_BINARY MODEL
set -u
seqrt=$1
model=$2
python=/usr/bin/python3 # Debian's, with python3-numpy (deps-debian.txt)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -c "import numpy as np; np.save('$work/tokens.npy',
  np.array([[40, 51, 2, 59, 52, 0, 33, 58, 45, 60, 2, 47]], dtype=np.int64))" ||
  { echo "FAIL: cannot write the input with $python and numpy" >&2; exit 1; }

if ! "$seqrt" run "$model" --input "tokens=$work/tokens.npy" --backend cuda \
  --output-dir "$work/cuda" >/dev/null 2>"$work/err"; then
  cat "$work/err"
  lines=$(grep -c . "$work/err")
  if [ "$lines" -ne 1 ] || ! grep -q "cuda backend: " "$work/err"; then
    echo "FAIL: expected one line naming the cuda backend, got $lines" >&2
    exit 1
  fi
  if grep -q -e "no CUDA driver" -e "no CUDA device" "$work/err"; then
    case ",${SEQRT_REQUIRE_BACKENDS:-}," in
      *,cuda,*)
        echo "FAIL: SEQRT_REQUIRE_BACKENDS requires cuda" >&2
        exit 1
        ;;
    esac
    echo "SKIPPED: no CUDA device here, so nothing was compared"
    exit 77
  fi
  echo "FAIL: the cuda backend failed for another reason than no device" >&2
  exit 1
fi

"$seqrt" run "$model" --input "tokens=$work/tokens.npy" --backend cpu \
  --output-dir "$work/cpu" >/dev/null ||
  { echo "FAIL: the cpu backend did not run the model" >&2; exit 1; }
"$python" - "$work" <<'EOF' || exit 1
import pathlib, sys
import numpy as np
work = pathlib.Path(sys.argv[1])
files = sorted(p.name for p in (work / "cpu").glob("*.npy"))
assert files, "the cpu run wrote no outputs"
for name in files:
    want, got = np.load(work / "cpu" / name), np.load(work / "cuda" / name)
    assert want.shape == got.shape, f"{name}: shape {got.shape}, want {want.shape}"
    bad = np.abs(got - want) > 1e-3 + 1e-3 * np.abs(want)
    assert not bad.any(), f"{name}: {bad.sum()} elements differ from cpu"
print(f"ok: {len(files)} outputs of cuda match cpu")
EOF
