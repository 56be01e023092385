"""Trains the demo's character-level hybrid model on Jane Austen's novels,
exports it with seqrt.export, checks the ONNX file with onnxruntime against
PyTorch, and converts it to .seqrt with the `seqrt` tool.

    build/venv/bin/python samples/demo/train.py            # the committed model

Every default is what produced the committed samples/demo/austen.seqrt.
Seeded (python, numpy, torch) and single-threaded, so a rerun on the same
machine type gives the same model. See samples/demo/README.md.
"""

import argparse
import json
import math
import os
import pathlib
import random
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch.nn import functional as F

import seqrt.export as sx

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from model import CharLM, Config, Exportable, example_state  # noqa: E402
from text import fetch_deb, load_text, unpack_deb  # noqa: E402

OPENBLAS = "libopenblas0-pthread"
OPENBLAS_DIR = "usr/lib/x86_64-linux-gnu/openblas-pthread"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=1000, help="optimizer steps")
    p.add_argument("--batch", type=int, default=8, help="sequences per step")
    p.add_argument("--length", type=int, default=128, help="characters per sequence")
    p.add_argument("--lr", type=float, default=4e-3, help="peak AdamW learning rate")
    p.add_argument("--warmup", type=int, default=30, help="linear warm-up steps")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--dim", type=int, default=128, help="model width")
    p.add_argument("--d-state", type=int, default=8, help="Mamba state size N")
    p.add_argument("--memory-hidden", type=int, default=1,
                   help="memory MLP width in head widths")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--cache", type=pathlib.Path, default=REPO / "build" / "demo-text",
                   help="where the Debian package is downloaded and unpacked")
    p.add_argument("--out", type=pathlib.Path, default=HERE / "austen.seqrt",
                   help="the model; its training figures go next to it (.json)")
    p.add_argument("--work", type=pathlib.Path, default=REPO / "build" / "demo",
                   help="where the ONNX file and the PyTorch weights are written")
    p.add_argument("--seqrt", type=pathlib.Path,
                   default=REPO / "build" / "release" / "tools" / "seqrt",
                   help="the seqrt tool, for `seqrt convert`")
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--no-openblas", dest="openblas", action="store_false",
                   help="use the system's BLAS as it is (see use_openblas)")
    return p.parse_args()


def use_openblas(args) -> None:
    """Debian's torch multiplies matrices through libblas.so.3, which is the
    reference BLAS unless an optimised one is installed (~20x slower here).
    Runs this script again with OpenBLAS from Debian's libopenblas0-pthread,
    unpacked into the cache, first on the library path: the system is left
    as it is."""
    if os.environ.get("SEQRT_DEMO_OPENBLAS") or not args.openblas:
        return
    lib = unpack_deb(fetch_deb(args.cache, OPENBLAS), args.cache / "openblas") / OPENBLAS_DIR
    env = dict(os.environ, SEQRT_DEMO_OPENBLAS=str(lib), OPENBLAS_NUM_THREADS=str(args.threads),
               LD_LIBRARY_PATH=os.pathsep.join(
                   p for p in (str(lib), os.environ.get("LD_LIBRARY_PATH")) if p))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def batches(data: torch.Tensor, batch: int, length: int, rng: np.random.Generator):
    """Random windows of length+1 characters: inputs and next-char targets."""
    while True:
        starts = rng.integers(0, len(data) - length - 1, size=batch)
        rows = torch.stack([data[s:s + length + 1] for s in starts])
        yield rows[:, :-1], rows[:, 1:]


def learning_rate(step: int, args) -> float:
    """Linear warm-up, then cosine decay to a tenth of the peak."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.45 * (1.0 + math.cos(math.pi * progress)))


def loss_of(model, x, y, vocab: int):
    logits, _ = model(x, fast=True)
    return F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))


def train(model, train_data, args, vocab: int):
    rng = np.random.default_rng(args.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                  weight_decay=args.weight_decay, betas=(0.9, 0.95))
    stream = batches(train_data, args.batch, args.length, rng)
    start, running = time.time(), []
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args)
        x, y = next(stream)
        loss = loss_of(model, x, y, vocab)
        if not torch.isfinite(loss):
            raise RuntimeError(f"loss is {loss.item()} at step {step}")
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        running.append(loss.item())
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            mean = sum(running) / len(running)
            print(f"step {step + 1:5d}  loss {mean:.3f}  lr {learning_rate(step, args):.2e}  "
                  f"{time.time() - start:6.0f} s", flush=True)
            running = []
    return mean, time.time() - start


@torch.no_grad()
def evaluate(model, data, args, vocab: int, batches_n: int = 8) -> float:
    rng = np.random.default_rng(args.seed + 1)
    stream = batches(data, args.batch, args.length, rng)
    return sum(loss_of(model, *next(stream), vocab).item() for _ in range(batches_n)) / batches_n


def export(model: CharLM, onnx_path: pathlib.Path, vocab_chars, figures) -> None:
    wrapper = Exportable(model).eval()
    names = wrapper.names
    presents = ["present" + n[len("past"):] for n in names]
    state = example_state(model, past_len=3)
    tokens = torch.randint(0, len(vocab_chars), (1, 5))
    dynamic = {"tokens": {1: "seq"}, "logits": {1: "seq"},
               "past_key": {2: "past_len"}, "past_value": {2: "past_len"},
               "present_key": {2: "total_len"}, "present_value": {2: "total_len"}}
    onnx_model = sx.export(wrapper, (tokens, *[state[n] for n in names]),
                           input_names=["tokens"] + names,
                           output_names=["logits"] + presents, dynamic_axes=dynamic)
    props = {"seqrt.tokenizer": "char", "seqrt.vocab": json.dumps(vocab_chars),
             "seqrt.state_pairs": ";".join(f"{a}:{b}" for a, b in zip(names, presents)),
             "seqrt.demo.text": "Jane Austen's six novels (Debian r-cran-janeaustenr)",
             "seqrt.demo.training": json.dumps(figures)}
    onnx.helper.set_model_props(onnx_model, props)
    onnx.save(onnx_model, str(onnx_path))


def zero_state(model: CharLM) -> dict:
    """The runtime's initial state: zeros, an empty KV cache."""
    state = example_state(model, past_len=0)
    return {n: torch.zeros_like(t) for n, t in state.items()}


@torch.no_grad()
def check_onnx(model: CharLM, onnx_path: pathlib.Path, text_ids: torch.Tensor) -> float:
    """onnxruntime (through the ONNX functions) vs PyTorch: a 12-token
    prefill from the zero state, then 3 single-token steps. Returns the
    largest absolute logit difference."""
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    names = model.state_names()
    prompt = text_ids[None, :12]
    expected, torch_state = model(prompt)
    state = zero_state(model)
    worst = 0.0
    outputs = session.run(None, {"tokens": prompt.numpy(),
                                 **{n: state[n].numpy() for n in names}})
    worst = max(worst, float(np.abs(outputs[0] - expected.numpy()).max()))
    for t in range(12, 15):
        token = text_ids[None, t:t + 1]
        expected, torch_state = model(token, torch_state)
        feeds = {"tokens": token.numpy(), **dict(zip(names, outputs[1:]))}
        outputs = session.run(None, feeds)
        worst = max(worst, float(np.abs(outputs[0] - expected.numpy()).max()))
    if worst > 1e-3:
        raise RuntimeError(f"onnxruntime and PyTorch differ by {worst} in the logits")
    return worst


def main():
    args = parse_args()
    use_openblas(args)
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    seed_everything(args.seed)
    text = load_text(args.cache)
    vocab_chars = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab_chars)}
    data = torch.tensor([index[c] for c in text], dtype=torch.int64)
    split = int(len(data) * 0.95)
    print(f"text: {len(text)} characters, vocabulary {len(vocab_chars)}", flush=True)

    config = Config(vocab=len(vocab_chars), dim=args.dim, d_state=args.d_state,
                    memory_hidden=args.memory_hidden)
    model = CharLM(config)
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params} parameters, layers {', '.join(config.layers)}", flush=True)
    final_loss, seconds = train(model, data[:split], args, len(vocab_chars))
    model.eval()
    val_loss = evaluate(model, data[split:], args, len(vocab_chars))
    print(f"validation loss {val_loss:.3f} nats/char", flush=True)

    figures = {"steps": args.steps, "batch": args.batch, "length": args.length,
               "parameters": params, "final_train_loss": round(final_loss, 4),
               "validation_loss": round(val_loss, 4), "train_seconds": round(seconds),
               "threads": args.threads, "seed": args.seed, "torch": torch.__version__,
               "blas": "OpenBLAS (libopenblas0-pthread)" if os.environ.get(
                   "SEQRT_DEMO_OPENBLAS") else "system"}
    args.work.mkdir(parents=True, exist_ok=True)
    onnx_path = args.work / args.out.with_suffix(".onnx").name
    export(model, onnx_path, vocab_chars, figures)
    figures["onnxruntime_max_abs_diff"] = check_onnx(model, onnx_path, data[split:split + 20])
    subprocess.run([str(args.seqrt), "convert", str(onnx_path), str(args.out)], check=True)
    torch.save(model.state_dict(), args.work / args.out.with_suffix(".pt").name)
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
