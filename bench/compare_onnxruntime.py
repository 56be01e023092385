#!/usr/bin/env python3
"""seqrt vs onnxruntime on the same .onnx files, in one run on this machine.

    build/venv/bin/python bench/compare_onnxruntime.py [--quick] \
        [--models bert,gpt2,mamba,retnet,titans,hf_gpt2,hf_llama,hf_bert,hf_mamba,
                  scan_selective,scan_retention,scan_delta,scan_lstm,scan_gru]
        [--repeat N] [--workdir DIR]

Exports the models (seeded random weights; cached in --workdir; the hf_*
ones are transformers models exported as the model zoo does, the scan_*
ones recurrences written as plain-ONNX Scans by compare/scan_models.py), converts
each to .seqrt, then per model: seqrt's Release CLI (`seqrt run --backend
cpu --repeat N`) and onnxruntime (CPU provider) each in its own process, both
on the same number of threads. Prints the agreement of their outputs, the
latencies, tokens/s, each process's peak RSS and the ratio ORT time / seqrt
time, then ONNX import vs .seqrt load times. A row that an engine fails
shows "failed", its error is printed below the tables, and the other rows
still run. See bench/README.md.
"""

import argparse
import dataclasses
import os
import pathlib
import platform
import shutil
import sys
import tempfile
import time
from typing import List, Optional

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from compare import engines, hf_models, models, scan_models  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_CLI = REPO / "build/release/tools/seqrt"
# --models name → its cases (quick) → List[Case]
MODELS = dict(models.MODELS, **hf_models.MODELS, **scan_models.MODELS)


@dataclasses.dataclass
class Row:
    case: models.Case
    seqrt: Optional[engines.Measured] = None
    ort: Optional[engines.Measured] = None
    seqrt_file_load_ms: Optional[float] = None
    arena: Optional[tuple] = None  # (planned peak, naive sum) bytes
    diff: Optional[tuple] = None
    errors: List[str] = dataclasses.field(default_factory=list)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare(case: models.Case, workdir: pathlib.Path):
    """Exports unless cached; returns (onnx, inputs dir). The inputs are
    written last, so a folder without them is an interrupted export."""
    directory = workdir / case.key
    onnx_path, input_dir = directory / "model.onnx", directory / "inputs"
    if not onnx_path.exists() or not input_dir.exists():
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        start = time.perf_counter()
        feeds = case.write(onnx_path)
        partial = directory / "inputs.partial"
        partial.mkdir()
        for name, value in feeds.items():
            np.save(partial / f"{name}.npy", value)
        partial.rename(input_dir)
        log(f"  exported {onnx_path} in {time.perf_counter() - start:.1f} s")
    return onnx_path, input_dir


def measure(case: models.Case, args) -> Row:
    row = Row(case)
    log(f"{case.model}: {case.phase}")
    try:
        onnx_path, input_dir = prepare(case, args.workdir)
    except (RuntimeError, OSError) as error:
        row.errors.append(f"export: {error}")
        return row
    directory = onnx_path.parent
    seqrt_path = directory / "model.seqrt"
    ort_repeat = min(args.repeat, args.ort_repeat) if case.seqrt_ops else args.repeat
    try:
        if not seqrt_path.exists():
            engines.convert(args.cli, onnx_path, seqrt_path)
        row.seqrt = engines.run_seqrt(args.cli, onnx_path, input_dir,
                                      directory / "out_seqrt", args.repeat,
                                      args.threads, args.spin)
        log(f"  seqrt {row.seqrt.run_ms:.2f} ms")
        row.seqrt_file_load_ms = engines.run_seqrt(
            args.cli, seqrt_path, input_dir, None, 1, args.threads,
            args.spin).setup_ms
        row.arena = engines.planned_arena(
            args.cli, seqrt_path, engines.symbolic_dims(onnx_path, input_dir))
    except RuntimeError as error:
        row.errors.append(f"seqrt: {error}")
    try:
        row.ort = engines.run_onnxruntime(onnx_path, input_dir,
                                          directory / "out_ort", ort_repeat,
                                          args.threads, args.spin)
        log(f"  onnxruntime {row.ort.run_ms:.2f} ms")
    except RuntimeError as error:
        row.errors.append(f"onnxruntime: {error}")
    if row.seqrt is not None and row.ort is not None:
        try:
            row.diff = engines.differences(row.seqrt.outputs, row.ort.outputs)
        except RuntimeError as error:
            row.errors.append(f"outputs: {error}")
    return row


def fmt(value: Optional[float], spec: str = ".2f") -> str:
    return "failed" if value is None else format(value, spec)


def tokens_per_s(case: models.Case, measured: Optional[engines.Measured]):
    return None if measured is None else case.tokens / (measured.run_ms / 1e3)


def print_tables(rows: List[Row], args) -> None:
    cpu = platform.processor() or platform.machine()
    waiting = ("both spin while waiting (their defaults)" if args.spin else
               "idle threads sleep instead of spinning: seqrt OMP_WAIT_POLICY="
               "passive, ORT session.intra_op.allow_spinning=0 (--spin for "
               "the defaults)")
    print(f"\nseqrt ({args.cli}, --backend cpu, OMP_NUM_THREADS={args.threads}) vs "
          f"onnxruntime {engines_version()} (CPU provider, intra_op_num_threads="
          f"{args.threads}, sequential) on {os.cpu_count()} cores ({cpu}); "
          f"{waiting}.")
    print(f"Latency: median of --repeat {args.repeat} runs (onnxruntime on the "
          f"seqrt-op models: {min(args.repeat, args.ort_repeat)}, through the ONNX "
          "function bodies). ratio = ORT time / seqrt time: > 1 means seqrt is "
          "faster. Peak RSS: each engine's own process (onnxruntime's includes "
          "its Python interpreter). diff: max |seqrt − ORT| over all outputs, "
          "and that over max |ORT|.\n")
    print("| model | shape / phase | seqrt ms | ORT ms | ratio ORT/seqrt | "
          "seqrt tok/s | ORT tok/s | seqrt peak RSS MiB | ORT peak RSS MiB | "
          "max abs diff | max rel diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        s, o = row.seqrt, row.ort
        ratio = o.run_ms / s.run_ms if s and o else None
        diff = row.diff or (None, None)
        print(f"| {row.case.model} | {row.case.phase} | "
              f"{fmt(s and s.run_ms)} | {fmt(o and o.run_ms)} | {fmt(ratio)} | "
              f"{fmt(tokens_per_s(row.case, s), '.1f')} | "
              f"{fmt(tokens_per_s(row.case, o), '.1f')} | "
              f"{fmt(s and s.peak_rss_mib, '.0f')} | {fmt(o and o.peak_rss_mib, '.0f')} | "
              f"{fmt(diff[0], '.2e')} | {fmt(diff[1], '.2e')} |")
    print("\nLoading: seqrt's load time of the .onnx (ONNX import) vs of the "
          "converted .seqrt (as `seqrt run` reports them), seqrt's compile, "
          "onnxruntime's session creation for the .onnx, and seqrt's planned "
          "peak arena next to the naive sum of its tensors (`seqrt inspect "
          "--plan`).\n")
    print("| model | shape / phase | .onnx import ms | .seqrt load ms | "
          "import / load | seqrt compile ms | ORT session ms | "
          "arena peak / naive KiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        s, o = row.seqrt, row.ort
        speedup = (s.setup_ms / row.seqrt_file_load_ms
                   if s and row.seqrt_file_load_ms else None)
        print(f"| {row.case.model} | {row.case.phase} | {fmt(s and s.setup_ms)} | "
              f"{fmt(row.seqrt_file_load_ms, '.3f')} | {fmt(speedup, '.1f')} | "
              f"{fmt(s and s.compile_ms)} | {fmt(o and o.setup_ms)} | "
              f"{arena_text(row.arena)} |")
    for row in rows:
        for error in row.errors:
            print(f"\nerror, {row.case.model} {row.case.phase}: {error}")


def arena_text(arena: Optional[tuple]) -> str:
    if arena is None:
        return "failed"
    peak, naive = arena
    return f"{peak / 1024:.0f} / {naive / 1024:.0f} ({100 * peak / max(naive, 1):.1f} %)"


def engines_version() -> str:
    import onnxruntime
    return onnxruntime.__version__


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small shapes and 1 repeat (a smoke test)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per engine and graph, the median is shown "
                             "(default 10, 1 with --quick)")
    parser.add_argument("--ort-repeat", type=int, default=2,
                        help="cap on onnxruntime's runs of the seqrt-op models, "
                             "slow through their function bodies (default 2)")
    parser.add_argument("--workdir", type=pathlib.Path, default=None,
                        help="where models are written and cached between "
                             "runs (default: a temporary directory)")
    parser.add_argument("--cli", default=os.environ.get("SEQRT_CLI", str(DEFAULT_CLI)),
                        help="the seqrt CLI (default $SEQRT_CLI or the Release build)")
    parser.add_argument("--spin", action="store_true",
                        help="let both engines' idle threads spin (their "
                             "defaults); by default they sleep, which a "
                             "loaded machine needs")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for both engines (default: all cores)")
    args = parser.parse_args(argv)
    unknown = set(args.models.split(",")) - set(MODELS)
    if unknown:
        parser.error(f"--models: unknown {sorted(unknown)}; "
                     f"known: {', '.join(MODELS)}")
    if args.repeat is None:
        args.repeat = 1 if args.quick else 10
    if args.repeat < 1 or args.ort_repeat < 1 or args.threads < 1:
        parser.error("--repeat, --ort-repeat and --threads must be at least 1")
    if not os.access(args.cli, os.X_OK):
        parser.error(f"seqrt CLI '{args.cli}' is not an executable; build it "
                     "or pass --cli / SEQRT_CLI")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    temporary = None
    if args.workdir is None:
        temporary = tempfile.TemporaryDirectory(prefix="seqrt_vs_ort_")
        args.workdir = pathlib.Path(temporary.name)
    args.workdir.mkdir(parents=True, exist_ok=True)
    cases = [case for name in args.models.split(",")
             for case in MODELS[name](args.quick)]
    rows = [measure(case, args) for case in cases]
    print_tables(rows, args)
    if temporary is not None:
        temporary.cleanup()
    return 1 if any(row.errors for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
