#!/usr/bin/env python3
"""Quantized weights beside onnxruntime (issue 29): a Llama-style decode
step (transformers LlamaForCausalLM, seeded random weights, exported by the
model zoo's code with a past of 64) in f32, as onnxruntime's own
MatMulNBitsQuantizer writes it (4 bits, block 32, symmetric, every MatMul)
and as `seqrt quantize` writes it (int4 and int8, block 32, symmetric, the
vocabulary projection quantized too, like onnxruntime's file), each also
with the embedding table quantized (GatherBlockQuantized; seqrt quantize
--embedding), and with int8 activations (MatMulNBits' accuracy_level 4;
seqrt quantize --activations int8).

Each engine runs each file in its own process, `--repeat` runs, median;
`--rounds` such processes per file, interleaved over the files, median;
`--spin` lets idle threads spin (both engines' default) instead of sleep;
the table gives the step time, the parameter bytes (`seqrt inspect`), each
process's peak RSS and, where both ran the same file, seqrt's largest
logit difference from onnxruntime relative to the largest logit. Usage
(from the repository root, after a Release build):

  build/venv/bin/python bench/compare_quantized.py --cli build/release/tools/seqrt
"""

import argparse
import pathlib
import re
import statistics
import subprocess
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from compare import engines, hf_models  # noqa: E402
from compare.models import OPSET  # noqa: E402

PAST = 64
BLOCK = 32


def export_f32(directory: pathlib.Path, dim: int, ffn: int, depth: int,
               vocab: int) -> pathlib.Path:
    """The decode-step export and its inputs (cached in `directory`)."""
    import transformers as tf
    path, inputs = directory / "f32.onnx", directory / "inputs"
    if path.exists() and inputs.exists():
        return path
    zoo = hf_models._zoo()
    heads, kv_heads = dim // 64, max(1, dim // 256)
    cfg = tf.LlamaConfig(vocab_size=vocab, hidden_size=dim,
                         intermediate_size=ffn, num_hidden_layers=depth,
                         num_attention_heads=heads,
                         num_key_value_heads=kv_heads,
                         max_position_embeddings=2 * PAST)
    _, decode = zoo.decoder_pair(lambda: tf.LlamaForCausalLM(cfg).eval(),
                                 depth, kv_heads, 64, True,
                                 "transformers LlamaForCausalLM", vocab)
    torch.manual_seed(0)
    entry = decode(path, OPSET, past_len=PAST)
    feeds = hf_models.graph_feeds(path, entry["steps"][0])
    inputs.mkdir()
    for name, value in feeds.items():
        np.save(inputs / f"{name}.npy", value)
    return path


def ort_q4(f32: pathlib.Path, embedding: bool = False,
           accuracy_level: int = 0) -> pathlib.Path:
    """onnxruntime's own 4-bit file (MatMulNBits; with `embedding` the
    table too, as GatherBlockQuantized; accuracy_level 4 asks for int8
    compute), cached."""
    name = "ort_q4" + ("_emb" if embedding else "") + (
        f"_acc{accuracy_level}" if accuracy_level else "")
    out = f32.with_name(name + ".onnx")
    if not out.exists():
        from onnxruntime.quantization.matmul_nbits_quantizer import (
            DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)
        ops = ("MatMul", "Gather") if embedding else ("MatMul",)
        config = DefaultWeightOnlyQuantConfig(
            block_size=BLOCK, is_symmetric=True, op_types_to_quantize=ops,
            quant_axes=(("MatMul", 0), ("Gather", 1)),
            accuracy_level=accuracy_level or None)
        model = onnx.load(str(f32))
        if embedding:
            # GatherBlockQuantized's int4 table needs opset 21, which the
            # quantizer sets without converting the other nodes (onnxruntime
            # then refuses the opset-17 ReduceMean): convert first.
            from onnx import version_converter
            model = version_converter.convert_version(model, 21)
        quantizer = MatMulNBitsQuantizer(model, algo_config=config)
        quantizer.process()
        quantizer.model.save_model_to_file(str(out), False)
    return out


def seqrt_quantized(cli: str, f32: pathlib.Path, bits: str,
                    embedding: str = "keep",
                    activations: str = "f32") -> pathlib.Path:
    out = f32.with_name(f"seqrt_{bits}_emb_{embedding}_x_{activations}.seqrt")
    if not out.exists():
        subprocess.run([cli, "quantize", str(f32), str(out), "--weights", bits,
                        "--block", str(BLOCK), "--symmetric",
                        "--output-layer", bits, "--embedding", embedding,
                        "--activations", activations],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def parameter_bytes(cli: str, model: pathlib.Path) -> int:
    text = subprocess.run([cli, "inspect", str(model)], check=True,
                          capture_output=True, text=True).stdout
    return int(re.search(r"parameters: \d+ in \d+ constants, (\d+) bytes",
                         text).group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default="build/release/tools/seqrt")
    parser.add_argument("--workdir", type=pathlib.Path,
                        default=pathlib.Path("/tmp/seqrt-bench-quantized"))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5,
                        help="runs of every file, interleaved; the table "
                             "gives each file's median round")
    parser.add_argument("--spin", action="store_true",
                        help="idle threads spin (libgomp's and onnxruntime's "
                             "default) instead of sleeping, for both engines")
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--ffn", type=int, default=2816)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=8000)
    args = parser.parse_args()
    directory = args.workdir / (f"llama_d{args.dim}_f{args.ffn}"
                                f"_l{args.layers}_v{args.vocab}")
    directory.mkdir(parents=True, exist_ok=True)
    f32 = export_f32(directory, args.dim, args.ffn, args.layers, args.vocab)
    inputs = directory / "inputs"
    files = {"f32": f32, "ort q4 (MatMulNBits)": ort_q4(f32),
             "ort q4, embedding too (GatherBlockQuantized)":
                 ort_q4(f32, embedding=True),
             "seqrt int4": seqrt_quantized(args.cli, f32, "int4"),
             "seqrt int4, embedding int4":
                 seqrt_quantized(args.cli, f32, "int4", "int4"),
             "seqrt int8": seqrt_quantized(args.cli, f32, "int8"),
             "seqrt int8, embedding int8":
                 seqrt_quantized(args.cli, f32, "int8", "int8"),
             "ort q4, accuracy_level 4 (int8 compute)":
                 ort_q4(f32, accuracy_level=4),
             "seqrt int4, int8 activations":
                 seqrt_quantized(args.cli, f32, "int4", activations="int8"),
             "seqrt int8, int8 activations":
                 seqrt_quantized(args.cli, f32, "int8", activations="int8")}
    # Rounds over all files, each file's time the median of its rounds: a
    # VM's speed drifts by 10-30 % between processes, and interleaving
    # spreads the drift over every file alike.
    times = {label: ([], []) for label in files}
    rows = {}
    for _ in range(args.rounds):
        for label, path in files.items():
            seqrt = engines.run_seqrt(args.cli, path, inputs,
                                      directory / "out_s", args.repeat,
                                      args.threads, args.spin)
            ort = None
            if path.suffix == ".onnx":
                ort = engines.run_onnxruntime(path, inputs, directory / "out_o",
                                              args.repeat, args.threads,
                                              args.spin)
                times[label][1].append(ort.run_ms)
            times[label][0].append(seqrt.run_ms)
            rel = None
            if ort is not None:
                logits, want = seqrt.outputs["logits"], ort.outputs["logits"]
                rel = float(np.abs(logits - want).max() / np.abs(want).max())
            rows[label] = (seqrt, ort, parameter_bytes(args.cli, path), rel)
            print(f"{label}: seqrt {seqrt.run_ms:.3f} ms"
                  + (f", onnxruntime {ort.run_ms:.3f} ms" if ort else ""),
                  file=sys.stderr, flush=True)
    for label, (seqrt_ms, ort_ms) in times.items():
        seqrt, ort, params, rel = rows[label]
        seqrt.run_ms = statistics.median(seqrt_ms)
        if ort is not None:
            ort.run_ms = statistics.median(ort_ms)
    base = rows["f32"][0].run_ms
    print(f"Llama decode step (d {args.dim}, ffn {args.ffn}, {args.layers} "
          f"layers, vocab {args.vocab}, past {PAST}), {args.threads} threads "
          f"({'spinning' if args.spin else 'sleeping'} when idle), "
          f"median of {args.rounds} rounds of {args.repeat} runs")
    print("| file | seqrt ms | seqrt f32 / this | onnxruntime ms | "
          "onnxruntime / seqrt | parameters MiB | seqrt peak RSS MiB | "
          "logits vs onnxruntime (rel) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, (seqrt, ort, params, rel) in rows.items():
        print(f"| {label} | {seqrt.run_ms:.3f} | {base / seqrt.run_ms:.2f} | "
              f"{f'{ort.run_ms:.3f}' if ort else '-'} | "
              f"{f'{ort.run_ms / seqrt.run_ms:.2f}' if ort else '-'} | "
              f"{params / 2**20:.1f} | {seqrt.peak_rss_mib:.0f} | "
              f"{f'{rel:.2e}' if rel is not None else '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
