"""How a zoo model's inputs are stored, shared by the torch 1.13 builder
(build_zoo.py) and the torch 2.x one (zoo_dynamo.py): numpy only."""

import pathlib
from typing import Dict, List

import numpy as np


def save_steps(model_dir: pathlib.Path, steps: List[Dict[str, np.ndarray]]):
    """step<k>/<input>.npy for each step k, as zoo_check.load_steps reads."""
    for k, inputs in enumerate(steps):
        step_dir = model_dir / f"step{k}"
        step_dir.mkdir(parents=True, exist_ok=True)
        for name, value in inputs.items():
            np.save(step_dir / f"{name}.npy", value)
