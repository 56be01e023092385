"""Start-up of the model zoo's files: seqrt's load + compile from the .onnx,
from a plain `seqrt convert` .seqrt and from a `seqrt convert --optimize`
.seqrt (the optimised graph stored, so Session creation skips the passes),
beside onnxruntime's session creation, each in a process of its own.

    build/venv/bin/python bench/startup_compare.py [--zoo DIR] [--cli PATH]
        [--models a,b] [--repeat N] [--workdir DIR]

--zoo defaults to the newest ~/.cache/seqrt/zoo-*; each model's first step
(step0/*.npy) is its input. Times are medians over --repeat processes."""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare.engines import run_onnxruntime, run_seqrt  # noqa: E402


def newest_zoo() -> pathlib.Path:
    found = sorted(pathlib.Path.home().glob(".cache/seqrt/zoo-*"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        sys.exit("no model zoo in ~/.cache/seqrt: run tests/zoo first or "
                 "pass --zoo")
    return found[-1]


def convert(cli: str, model: pathlib.Path, out: pathlib.Path, flags):
    if out.exists():
        return
    proc = subprocess.run([cli, "convert", str(model), str(out), *flags],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"seqrt convert {model}: {proc.stderr.strip()}")


def median_setup(measure, repeat: int):
    """Median load and compile ms (compile None for onnxruntime)."""
    runs = [measure() for _ in range(repeat)]
    load = statistics.median(r.setup_ms for r in runs)
    if runs[0].compile_ms is None:
        return load, None
    return load, statistics.median(r.compile_ms for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=pathlib.Path, default=None)
    parser.add_argument("--cli", default=os.environ.get(
        "SEQRT_CLI", str(HERE.parent / "build/release/tools/seqrt")))
    parser.add_argument("--models", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--workdir", type=pathlib.Path, default=None)
    args = parser.parse_args()
    zoo = args.zoo or newest_zoo()
    workdir = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="startup-"))
    wanted = set(filter(None, args.models.split(",")))
    models = sorted(p.parent for p in zoo.glob("*/model.onnx")
                    if (p.parent / "step0").is_dir()
                    and (not wanted or p.parent.name in wanted))
    print(f"zoo {zoo}, {args.threads} threads, medians of {args.repeat}; "
          "ms as load + compile")
    print("| model | .onnx | .seqrt | .seqrt --optimize | onnxruntime session |")
    print("|---|---:|---:|---:|---:|")
    for model_dir in models:
        name = model_dir.name
        onnx = model_dir / "model.onnx"
        plain = workdir / f"{name}.seqrt"
        optimized = workdir / f"{name}.optimized.seqrt"
        convert(args.cli, onnx, plain, [])
        convert(args.cli, onnx, optimized, ["--optimize"])
        inputs = model_dir / "step0"
        cells = []
        for path in (onnx, plain, optimized):
            load, compile_ = median_setup(
                lambda: run_seqrt(args.cli, path, inputs, None, 1,
                                  args.threads, False), args.repeat)
            cells.append(f"{load:.1f} + {compile_:.1f}")
        create, _ = median_setup(
            lambda: run_onnxruntime(onnx, inputs, workdir / "ort" / name, 1,
                                    args.threads, False), args.repeat)
        cells.append(f"{create:.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
