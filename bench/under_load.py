#!/usr/bin/env python3
"""A decode step idle and beside busy processes: seqrt vs onnxruntime.

    build/venv/bin/python bench/under_load.py [--busy 2] [--repeat 200]
        [--models gpt2,llama,minilm] [--workdir DIR] [--cli build/release/tools/seqrt]

A laptop always has other jobs. This measures how much a busy machine costs
each engine: every model runs idle, then beside `--busy` processes that spin
on a core each (as many as the machine has cores by default), in seqrt's CLI
with its default threads (no OMP_* variables: what a user gets) and in
onnxruntime (its default intra-op pool on as many threads as cores, spinning
on). The exports are Hugging Face models with seeded weights written by
torch.onnx (transformers' GPT-2 and Llama, 4 layers × 256, a decode step
with a past of 64 tokens; MiniLM-size BERT on 2 × 32 tokens). Prints the
median run time of each and the loaded / idle factor. A benchmark, not a
test: run it on an otherwise idle machine.
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests/zoo"))
from compare import engines  # noqa: E402

LAYERS, WIDTH, HEADS, PAST = 4, 256, 4, 64


def decoder_step(name: str, path: pathlib.Path) -> Dict[str, np.ndarray]:
    """Exports one decode step of a seeded HF decoder; returns its inputs."""
    import torch
    import transformers as tf
    import zoo_exports as zoo

    torch.manual_seed(0)
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=1000, n_positions=256, n_embd=WIDTH,
                            n_layer=LAYERS, n_head=HEADS)
        model, kv_heads, with_mask = tf.GPT2LMHeadModel(cfg), HEADS, False
    else:
        cfg = tf.LlamaConfig(vocab_size=1000, hidden_size=WIDTH,
                             intermediate_size=2 * WIDTH,
                             num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                             num_key_value_heads=HEADS // 2,
                             max_position_embeddings=256)
        model, kv_heads, with_mask = tf.LlamaForCausalLM(cfg), HEADS // 2, True
    ids = zoo.token_ids(1, 1)
    pasts = [torch.randn(1, kv_heads, PAST, WIDTH // HEADS)
             for _ in range(2 * LAYERS)]
    mask = [torch.ones(1, PAST + 1, dtype=torch.int64)] if with_mask else []
    names = (["input_ids"] + (["attention_mask"] if with_mask else [])
             + zoo.past_names(LAYERS, "past_key_values"))
    axes = {n: {0: "batch", 2: "past"}
            for n in zoo.past_names(LAYERS, "past_key_values")}
    zoo.export(zoo.DecoderWithPast(model.eval(), LAYERS, with_mask), path,
               [ids] + mask + pasts, names,
               ["logits"] + zoo.past_names(LAYERS, "present"), 17, axes)
    return zoo.numpy_inputs(names, [ids] + mask + pasts)


def encoder(path: pathlib.Path) -> Dict[str, np.ndarray]:
    """A MiniLM-size BERT (6 × 384, 12 heads) on a batch of 2 × 32 tokens."""
    import torch
    import transformers as tf
    import zoo_exports as zoo

    torch.manual_seed(0)
    cfg = tf.BertConfig(vocab_size=1000, hidden_size=384, num_hidden_layers=6,
                        num_attention_heads=12, intermediate_size=1536)
    ids = zoo.token_ids(2, 32)
    mask = torch.ones_like(ids)
    names = ["input_ids", "attention_mask"]
    zoo.export(zoo.EncoderOutput(tf.BertModel(cfg).eval()), path, [ids, mask],
               names, ["last_hidden_state"], 17)
    return zoo.numpy_inputs(names, [ids, mask])


BUILDERS = {"gpt2": lambda p: decoder_step("gpt2", p),
            "llama": lambda p: decoder_step("llama", p),
            "minilm": encoder}


def prepare(name: str, workdir: pathlib.Path) -> pathlib.Path:
    directory = workdir / name
    if not (directory / "model.onnx").exists():
        (directory / "inputs").mkdir(parents=True, exist_ok=True)
        feeds = BUILDERS[name](directory / "model.onnx")
        for key, value in feeds.items():
            np.save(directory / "inputs" / f"{key}.npy", value)
    return directory


def start_busy(count: int) -> List[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]


SEQRT_MEAN = re.compile(r"runs: mean ([\d.]+) ms")


def measure(cli: str, directory: pathlib.Path, repeat: int, threads: int):
    """((median, mean) of seqrt, (median, mean) of onnxruntime) in ms over
    `repeat` runs each: the median is a typical step, the mean what a
    stream of steps costs (a busy machine shows in the tail)."""
    model, inputs = directory / "model.onnx", directory / "inputs"
    seqrt_env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    args = [cli, "run", str(model), "--backend", "cpu", "--repeat", str(repeat)]
    for path in sorted(inputs.glob("*.npy")):
        args += ["--input", f"{path.stem}={path}"]
    stdout, _ = engines.run_process(args, f"seqrt run {directory.name}", seqrt_env)
    mean = SEQRT_MEAN.search(stdout)
    if mean is None:
        raise RuntimeError(f"{cli} prints no 'runs: mean' line (an older build?)")
    seqrt = (float(engines.SEQRT_TIME.search(stdout).group(3)), float(mean.group(1)))
    with tempfile.TemporaryDirectory() as out:
        stdout, _ = engines.run_process(
            [sys.executable, str(engines.WORKER), str(model), str(inputs), out,
             str(repeat), str(threads), "1"],
            f"onnxruntime on {directory.name}", engines.thread_env(threads, True))
    runs = json.loads(stdout.strip().splitlines()[-1])["run_ms"]
    return seqrt, (statistics.median(runs), statistics.mean(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--models", default="gpt2,llama,minilm")
    parser.add_argument("--workdir", default=str(REPO / "build/under_load"))
    parser.add_argument("--cli", default=str(REPO / "build/release/tools/seqrt"))
    args = parser.parse_args()
    threads = os.cpu_count()
    workdir = pathlib.Path(args.workdir)
    names = [n for n in args.models.split(",") if n]
    for name in names:
        if name not in BUILDERS:
            sys.exit(f"unknown model '{name}'; choose from {', '.join(BUILDERS)}")
    dirs = {name: prepare(name, workdir) for name in names}

    rows = []
    for name in names:
        idle = measure(args.cli, dirs[name], args.repeat, threads)
        busy = start_busy(args.busy)
        try:
            loaded = measure(args.cli, dirs[name], args.repeat, threads)
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
        rows.append((name, idle, loaded))

    print(f"{threads} cores; loaded = beside {args.busy} busy processes; "
          f"{args.repeat} runs each, median / mean in ms; factor = loaded mean / "
          f"idle mean; onnxruntime on {threads} threads, spinning")
    print("| model | seqrt idle | seqrt loaded | factor | ORT idle | ORT loaded "
          "| factor | ORT/seqrt idle | ORT/seqrt loaded |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(pair):
        return f"{pair[0]:.3f} / {pair[1]:.3f}"

    for name, (s_idle, o_idle), (s_load, o_load) in rows:
        print(f"| {name} | {cell(s_idle)} | {cell(s_load)} | {s_load[1] / s_idle[1]:.1f}× "
              f"| {cell(o_idle)} | {cell(o_load)} | {o_load[1] / o_idle[1]:.1f}× "
              f"| {o_idle[1] / s_idle[1]:.2f} | {o_load[1] / s_load[1]:.2f} |")


if __name__ == "__main__":
    main()
