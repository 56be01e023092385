"""The zoo's second venv, with torch 2.x for the models that zoo_dynamo.py
exports with `torch.onnx.export(..., dynamo=True)`. It stays apart from
build/venv (torch 1.13): the exports run in a subprocess with its python.

The venv (build/venv-torch2, or SEQRT_TORCH2_VENV) is made from
requirements-torch2.txt when missing or when that file changed (a stamp in
the venv records what it was made from), which needs the Python package
index: without it the zoo build fails, saying so. Standard library only, so
that the torch 1.13 process can import it.
"""

import os
import pathlib
import subprocess
import sys
from typing import List, Optional

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
REQUIREMENTS = HERE / "requirements-torch2.txt"

# The models zoo_dynamo.py builds (named here so that test_zoo.py lists them
# without importing torch 2.x).
MODELS = ("llama_dynamo_prefill", "decoder_block_dynamo")


def venv_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("SEQRT_TORCH2_VENV",
                                       REPO / "build" / "venv-torch2"))


def ensure_venv() -> pathlib.Path:
    """The venv's python, after making the venv if it is missing or stale."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    stamp = venv / "seqrt-requirements.txt"
    wanted = REQUIREMENTS.read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(f"zoo: making the torch 2.x venv {venv} from {REQUIREMENTS.name}"
          " (about 3 GB from the Python package index)", flush=True)
    steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
             [str(python), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", "-r", str(REQUIREMENTS)]]
    for command in steps:
        if subprocess.run(command).returncode != 0:
            sys.exit(f"zoo: could not make the torch 2.x venv {venv}: "
                     f"'{' '.join(command)}' failed. The zoo's dynamo=True "
                     "exports need it, and pip needs the Python package index"
                     " (tests/zoo/README.md).")
    stamp.write_text(wanted)
    return python


def build(out: pathlib.Path, only: Optional[List[str]]) -> None:
    """Builds the dynamo models into `out` (zoo_dynamo.py writes their
    manifest entries to out/manifest-torch2.json)."""
    wanted = [m for m in MODELS if not only or m in only]
    if not wanted:
        return
    python = ensure_venv()
    command = [str(python), str(HERE / "zoo_dynamo.py"), str(out),
               "--only", *wanted]
    if subprocess.run(command).returncode != 0:
        sys.exit(f"zoo: the torch 2.x exports failed: '{' '.join(command)}'")
