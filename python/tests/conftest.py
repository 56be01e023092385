"""Cross-checks: the same .onnx file in onnxruntime (through the ONNX
functions) and in seqrt (fused ops, through its CLI), against PyTorch eager.

Tolerances: rtol 1e-4 (fp32), atol 1e-5. The outputs of these small models
are O(1); fp32 results that sum O(10²) products of O(1) terms carry absolute
rounding errors of a few 1e-6 around zero, where a relative bound alone
cannot hold. 1e-5 is a few times that and far below any real mistake
(a wrong mask, decay or gate moves outputs by 1e-2 or more).
"""

import os
import pathlib
import subprocess
from typing import Dict, Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import seqrt.export as sx

RTOL = 1e-4
ATOL = 1e-5
REPO = pathlib.Path(__file__).resolve().parents[2]
BACKENDS = ("reference", "cpu")


def seqrt_cli() -> str:
    return os.environ.get("SEQRT_CLI", str(REPO / "build/dev/tools/seqrt"))


def run_seqrt(model_path: pathlib.Path, inputs: Dict[str, np.ndarray],
              backend: str, workdir: pathlib.Path) -> Dict[str, np.ndarray]:
    out_dir = workdir / f"out_{backend}"
    args = [seqrt_cli(), "run", str(model_path), "--backend", backend,
            "--output-dir", str(out_dir)]
    for name, value in inputs.items():
        path = workdir / f"in_{name}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(
            f"seqrt run on {backend} failed: {proc.stderr.strip()}")
    return {p.stem: np.load(p) for p in out_dir.glob("*.npy")}


def run_onnxruntime(model_path: pathlib.Path,
                    inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    session = ort.InferenceSession(str(model_path),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, inputs)))


def _assert_close(actual, expected, what: str) -> None:
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL,
                               err_msg=what)


def _numpy(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def cross_check(module: torch.nn.Module, inputs: Dict[str, torch.Tensor],
                output_names: Sequence[str], tmp_path: pathlib.Path,
                backend: str, expected_ops: Sequence[str] = ()):
    """Exports `module`, then checks onnxruntime and seqrt (on `backend`)
    against eager PyTorch. Returns the outputs of seqrt by name."""
    module.eval()
    with torch.no_grad():
        eager = module(*inputs.values())
    eager = eager if isinstance(eager, tuple) else (eager,)
    expected = {n: _numpy(t) for n, t in zip(output_names, eager)}
    path = tmp_path / "model.onnx"
    model = sx.export(module, tuple(inputs.values()), str(path),
                      input_names=list(inputs), output_names=list(output_names))
    onnx.checker.check_model(model, full_check=True)  # with shape inference
    seqrt_ops = {n.op_type for n in model.graph.node if n.domain == "seqrt"}
    assert set(expected_ops) <= seqrt_ops, f"exported seqrt ops: {seqrt_ops}"
    feeds = {n: _numpy(t) for n, t in inputs.items()}
    from_ort = run_onnxruntime(path, feeds)
    for name in output_names:
        _assert_close(from_ort[name], expected[name], f"onnxruntime {name}")
    from_seqrt = run_seqrt(path, feeds, backend, tmp_path)
    for name in output_names:
        _assert_close(from_seqrt[name], expected[name], f"seqrt {backend} {name}")
        _assert_close(from_seqrt[name], from_ort[name],
                      f"seqrt {backend} vs onnxruntime {name}")
    return from_seqrt


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
