"""Runs a zoo model through the `seqrt` CLI and through onnxruntime, step by
step (a streamed model's state outputs feed its state inputs at the next
step, on each side separately), and compares every output of every step.

Tolerance (fp32): |seqrt - onnxruntime| <= 1e-4 * max|onnxruntime| per
output, plus 1e-6 for outputs that are all near zero.
"""

import json
import pathlib
import subprocess
import tempfile
from typing import Dict, List, Optional

import numpy as np
import onnxruntime as ort

REL_TOL = 1e-4

# How a model is run: a backend, and whether through the optimisation passes
# or as given, and from the .onnx file or after `seqrt convert --optimize` to
# .seqrt (the optimised graph stored, so the load skips the passes).
CONFIGS = {
    "reference": ("reference", []),
    "cpu": ("cpu", []),
    "cpu --no-optimize": ("cpu", ["--no-optimize"]),
    "cpu .seqrt": ("cpu", ["<seqrt>"]),
    "vulkan": ("vulkan", []),
    # Heterogeneous: Vulkan first, the CPU for the nodes Vulkan refuses.
    "vulkan,cpu": ("vulkan,cpu", []),
}


def load_steps(model_dir: pathlib.Path) -> List[Dict[str, np.ndarray]]:
    steps = []
    k = 0
    while (model_dir / f"step{k}").is_dir():
        steps.append({p.stem: np.load(p)
                      for p in sorted((model_dir / f"step{k}").glob("*.npy"))})
        k += 1
    return steps


def stream(run_step, steps, state: Dict[str, str]) -> List[Dict[str, np.ndarray]]:
    """Runs each step, feeding state outputs into the next step's inputs."""
    results, carried = [], {}
    for inputs in steps:
        outputs = run_step({**inputs, **carried})
        results.append(outputs)
        carried = {state[name]: value for name, value in outputs.items()
                   if name in state}
    return results


def onnxruntime_outputs(model: pathlib.Path, steps, state):
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return stream(lambda inputs: dict(zip(names, session.run(None, inputs))),
                  steps, state)


class SeqrtError(Exception):
    pass


def seqrt_outputs(cli: str, model: pathlib.Path, config: str, steps, state,
                  workdir: pathlib.Path):
    backend, flags = CONFIGS[config]
    if "<seqrt>" in flags:
        converted = workdir / "model.seqrt"
        if not converted.exists():
            proc = subprocess.run(
                [cli, "convert", str(model), str(converted), "--optimize"],
                capture_output=True, text=True)
            if proc.returncode != 0:
                raise SeqrtError(f"seqrt convert failed: {proc.stderr.strip()}")
        model, flags = converted, []
    counter = iter(range(1 << 30))

    def run_step(inputs):
        k = next(counter)
        step_dir = workdir / f"{backend}{''.join(flags)}_step{k}"
        step_dir.mkdir(parents=True, exist_ok=True)
        args = [cli, "run", str(model), "--backend", backend,
                "--output-dir", str(step_dir / "out")] + flags
        for name, value in inputs.items():
            path = step_dir / f"in_{name}.npy"
            np.save(path, value)
            args += ["--input", f"{name}={path}"]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SeqrtError(proc.stderr.strip().splitlines()[-1]
                             if proc.stderr.strip() else f"exit {proc.returncode}")
        return {p.stem: np.load(p) for p in (step_dir / "out").glob("*.npy")}

    return stream(run_step, steps, state)


def mismatch(actual: List[Dict], expected: List[Dict]) -> Optional[str]:
    """None when every output of every step agrees, else what differs."""
    for k, (got, want) in enumerate(zip(actual, expected)):
        for name, ref in want.items():
            if name not in got:
                return f"step {k}: output '{name}' missing"
            out = got[name]
            if out.shape != ref.shape:
                return (f"step {k}: output '{name}' has shape {out.shape},"
                        f" expected {ref.shape}")
            ref64, out64 = ref.astype(np.float64), out.astype(np.float64)
            scale = float(np.max(np.abs(ref64))) if ref.size else 0.0
            err = float(np.max(np.abs(out64 - ref64))) if ref.size else 0.0
            if not err <= REL_TOL * scale + 1e-6:
                return (f"step {k}: output '{name}' differs by {err:.3g}"
                        f" (max|expected| {scale:.3g})")
    return None


def check(cli: str, zoo: pathlib.Path, name: str, config: str) -> Optional[str]:
    """None when `name` matches onnxruntime under `config`, else the reason."""
    entry = json.loads((zoo / "manifest.json").read_text())[name]
    model = zoo / name / "model.onnx"
    steps, state = load_steps(zoo / name), entry.get("state", {})
    expected = onnxruntime_outputs(model, steps, state)
    with tempfile.TemporaryDirectory(prefix=f"zoo_{name}_") as tmp:
        try:
            actual = seqrt_outputs(cli, model, config, steps, state,
                                   pathlib.Path(tmp))
        except SeqrtError as e:
            return str(e)
    return mismatch(actual, expected)
