"""Runs seqrt's CLI and the onnxruntime worker, each in its own process
(for its own peak RSS), and compares their outputs."""

import dataclasses
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
PEAK_RSS = HERE / "peak_rss.py"
WORKER = HERE / "ort_worker.py"
SEQRT_PLAN = re.compile(r"peak arena: (\d+) bytes; naive sum: (\d+) bytes")
SEQRT_TIME = re.compile(r"time: load ([\d.]+) ms, compile ([\d.]+) ms, "
                        r"run ([\d.]+) ms")


@dataclasses.dataclass
class Measured:
    run_ms: float            # median over the repeats
    repeat: int
    peak_rss_mib: float      # the process's max RSS
    setup_ms: float          # seqrt: load; onnxruntime: session creation
    compile_ms: Optional[float] = None
    outputs: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


def run_process(args: List[str], what: str, env: Dict[str, str]):
    """Runs args through peak_rss.py (see there why not directly); returns
    (stdout, peak RSS MiB). Raises with stderr on failure."""
    with tempfile.NamedTemporaryFile(mode="r") as peak:
        proc = subprocess.run([sys.executable, str(PEAK_RSS), peak.name, *args],
                              capture_output=True, text=True, env=env)
        kib = peak.read().strip()
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout, int(kib) / 1024.0


def thread_env(threads: int, spin: bool) -> Dict[str, str]:
    """OpenMP settings for seqrt (its CPU backend and oneDNN share libgomp's
    team). Without spin, waiting threads sleep: on a loaded machine a
    spinning team whose other thread is descheduled stalls every barrier."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    if spin:
        env.pop("OMP_WAIT_POLICY", None)  # libgomp's default: spin, then sleep
    else:
        env["OMP_WAIT_POLICY"] = "passive"
    return env


def read_outputs(directory: pathlib.Path) -> Dict[str, np.ndarray]:
    return {p.stem: np.load(p) for p in sorted(directory.glob("*.npy"))}


def run_seqrt(cli: str, model: pathlib.Path, input_dir: pathlib.Path,
              output_dir: Optional[pathlib.Path], repeat: int,
              threads: int, spin: bool) -> Measured:
    args = [cli, "run", str(model), "--backend", "cpu", "--repeat", str(repeat)]
    for path in sorted(input_dir.glob("*.npy")):
        args += ["--input", f"{path.stem}={path}"]
    if output_dir is not None:
        args += ["--output-dir", str(output_dir)]
    stdout, rss = run_process(args, f"seqrt run {model.name}", thread_env(threads, spin))
    found = SEQRT_TIME.search(stdout)
    if found is None:
        raise RuntimeError(f"seqrt run {model.name}: no 'time:' line in:\n{stdout}")
    load, compile_, run = (float(g) for g in found.groups())
    outputs = read_outputs(output_dir) if output_dir is not None else {}
    return Measured(run, repeat, rss, load, compile_, outputs)


def run_onnxruntime(model: pathlib.Path, input_dir: pathlib.Path,
                    output_dir: pathlib.Path, repeat: int,
                    threads: int, spin: bool) -> Measured:
    args = [sys.executable, str(WORKER), str(model), str(input_dir),
            str(output_dir), str(repeat), str(threads), "1" if spin else "0"]
    stdout, rss = run_process(args, f"onnxruntime on {model.name}",
                              thread_env(threads, spin))
    report = json.loads(stdout.strip().splitlines()[-1])
    return Measured(statistics.median(report["run_ms"]), repeat, rss,
                    report["create_ms"], None, read_outputs(output_dir))


def convert(cli: str, onnx_path: pathlib.Path, seqrt_path: pathlib.Path) -> float:
    """seqrt convert; returns its wall time in ms."""
    start = time.perf_counter()
    run_process([cli, "convert", str(onnx_path), str(seqrt_path)],
                f"seqrt convert {onnx_path.name}", dict(os.environ))
    return (time.perf_counter() - start) * 1e3


def symbolic_dims(onnx_path: pathlib.Path,
                  input_dir: pathlib.Path) -> Dict[str, int]:
    """Each named (dynamic) dim of the graph's inputs → its size in the
    stored inputs, for `seqrt inspect --plan --bind`."""
    import onnx
    sizes: Dict[str, int] = {}
    for value in onnx.load(str(onnx_path), load_external_data=False).graph.input:
        shape = np.load(input_dir / f"{value.name}.npy", mmap_mode="r").shape
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if not dim.dim_param:
                continue
            if sizes.setdefault(dim.dim_param, shape[axis]) != shape[axis]:
                raise RuntimeError(
                    f"{onnx_path}: dim '{dim.dim_param}' is {sizes[dim.dim_param]} "
                    f"in one input and {shape[axis]} in '{value.name}'")
    return sizes


def planned_arena(cli: str, model: pathlib.Path, binds: Dict[str, int]):
    """(peak arena bytes, naive sum bytes) from `seqrt inspect --plan`, with
    the symbolic dims bound to binds' sizes."""
    args = [cli, "inspect", str(model), "--plan"]
    for name, size in sorted(binds.items()):
        args += ["--bind", f"{name}={size}"]
    stdout, _ = run_process(args, f"seqrt inspect --plan {model.name}",
                            dict(os.environ))
    found = SEQRT_PLAN.search(stdout)
    if found is None:
        raise RuntimeError(f"seqrt inspect --plan {model.name}: no 'peak arena' line")
    return int(found.group(1)), int(found.group(2))


def differences(seqrt: Dict[str, np.ndarray], ort: Dict[str, np.ndarray]):
    """(max abs diff, max abs diff / max |ORT value|) over all outputs.
    Raises if the output sets or shapes differ or any value is not finite:
    NaN against NaN would otherwise compare as equal."""
    if set(seqrt) != set(ort):
        raise RuntimeError(f"outputs differ: seqrt {sorted(seqrt)}, "
                           f"onnxruntime {sorted(ort)}")
    worst_abs, worst_rel = 0.0, 0.0
    for name, expected in ort.items():
        actual = seqrt[name]
        if actual.shape != expected.shape:
            raise RuntimeError(f"output '{name}': seqrt shape {actual.shape}, "
                               f"onnxruntime {expected.shape}")
        for engine, values in (("seqrt", actual), ("onnxruntime", expected)):
            bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
            if bad:
                raise RuntimeError(f"output '{name}': {bad} of {values.size} "
                                   f"values from {engine} are not finite")
        diff = float(np.max(np.abs(actual.astype(np.float64) - expected)))
        scale = float(np.max(np.abs(expected))) or 1.0
        worst_abs, worst_rel = max(worst_abs, diff), max(worst_rel, diff / scale)
    return worst_abs, worst_rel
