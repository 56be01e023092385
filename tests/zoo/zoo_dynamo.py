"""The zoo's exports by the torch 2.x exporter, `torch.onnx.export(...,
dynamo=True)`, as new users make them. Runs in the venv zoo_torch2.py makes
(torch 2.x, transformers, onnxscript), never in the torch 1.13 one:

    build/venv-torch2/bin/python tests/zoo/zoo_dynamo.py OUT_DIR [--only M..]

writes OUT_DIR/<model>/model.onnx and step0/<input>.npy as build_zoo.py
does, and the models' manifest entries to OUT_DIR/manifest-torch2.json,
which build_zoo.py merges into manifest.json.
"""

import argparse
import json
import pathlib
import sys
from typing import Dict

import numpy as np
import torch
import transformers as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import zoo_files  # noqa: E402
import zoo_torch2  # noqa: E402

VOCAB = 1000


def export(module: torch.nn.Module, path: pathlib.Path,
           args: Dict[str, torch.Tensor], output_names,
           dynamic: Dict[str, Dict[int, str]]) -> str:
    """Exports with dynamo=True at the exporter's default opset, and returns
    what made it (for the manifest's source)."""
    module.eval()
    dims = {}
    shapes = {name: {axis: dims.setdefault(dim, torch.export.Dim(dim))
                     for axis, dim in axes.items()}
              for name, axes in dynamic.items()}
    with torch.no_grad():
        program = torch.onnx.export(module, tuple(args.values()), dynamo=True,
                                    input_names=list(args),
                                    output_names=output_names,
                                    dynamic_shapes=shapes, verbose=False)
    program.save(str(path))
    opset = program.model_proto.opset_import
    version = next(o.version for o in opset if o.domain in ("", "ai.onnx"))
    return f"torch {torch.__version__.split('+')[0]} dynamo=True, opset {version}"


def numpy_inputs(args: Dict[str, torch.Tensor]) -> Dict[str, np.ndarray]:
    return {name: value.numpy() for name, value in args.items()}


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


def llama_prefill(path: pathlib.Path) -> Dict:
    """A transformers Llama as it comes (SDPA attention), prefill of a
    right-padded batch of 2."""
    cfg = tf.LlamaConfig(vocab_size=VOCAB, hidden_size=96,
                         intermediate_size=192, num_hidden_layers=2,
                         num_attention_heads=6, num_key_value_heads=2,
                         max_position_embeddings=128)
    model = tf.LlamaForCausalLM(cfg)
    ids = torch.randint(0, VOCAB, (2, 16), dtype=torch.int64)
    mask = torch.ones_like(ids)
    mask[1, 12:] = 0
    args = {"input_ids": ids, "attention_mask": mask}
    made_by = export(Logits(model), path, args, ["logits"],
                     {n: {0: "batch", 1: "seq"} for n in args})
    return {"source": f"transformers {tf.__version__} LlamaForCausalLM (2 x 96,"
                      " GQA 6/2, SDPA), padded prefill of 2 x 16, " + made_by,
            "steps": [numpy_inputs(args)]}


# ---- a decoder written by hand, as in nanoGPT-style code --------------------

def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(torch.nn.Module):
    """RMSNorm, grouped-query attention with RoPE through
    F.scaled_dot_product_attention(is_causal=True), SwiGLU."""

    def __init__(self, dim: int, heads: int, kv_heads: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attn_norm = torch.nn.RMSNorm(dim, eps=1e-5)
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.out = torch.nn.Linear(dim, dim, bias=False)
        self.mlp_norm = torch.nn.RMSNorm(dim, eps=1e-5)
        self.gate_up = torch.nn.Linear(dim, 4 * dim, bias=False)
        self.down = torch.nn.Linear(2 * dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, self.kv_heads, self.head_dim).unbind(2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, -1))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(torch.nn.functional.silu(gate) * up)


class TinyDecoder(torch.nn.Module):
    def __init__(self, dim=64, heads=4, kv_heads=2, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, dim)
        self.blocks = torch.nn.ModuleList(
            Block(dim, heads, kv_heads) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(dim, eps=1e-5)
        self.head = torch.nn.Linear(dim, VOCAB, bias=False)
        half = dim // heads // 2
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(half) / half),
                             persistent=False)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], dtype=torch.float32)
        angles = torch.outer(positions, self.inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos(), angles.sin()
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def decoder_block(path: pathlib.Path) -> Dict:
    ids = torch.randint(0, VOCAB, (2, 20), dtype=torch.int64)
    args = {"input_ids": ids}
    made_by = export(TinyDecoder(), path, args, ["logits"],
                     {"input_ids": {0: "batch", 1: "seq"}})
    return {"source": "hand-written decoder (2 x 64: nn.RMSNorm, RoPE, GQA 4/2"
                      " via scaled_dot_product_attention(is_causal), SwiGLU),"
                      " batch 2 x 20, " + made_by,
            "steps": [numpy_inputs(args)]}


BUILDERS = {
    "llama_dynamo_prefill": llama_prefill,
    "decoder_block_dynamo": decoder_block,
}
assert tuple(BUILDERS) == zoo_torch2.MODELS, "keep zoo_torch2.MODELS in step"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--only", nargs="*", help="build only these models")
    args = parser.parse_args()
    manifest = {}
    for name, build in BUILDERS.items():
        if args.only and name not in args.only:
            continue
        model_dir = args.out / name
        model_dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        entry = build(model_dir / "model.onnx")
        zoo_files.save_steps(model_dir, entry.pop("steps"))
        manifest[name] = entry
        print(f"zoo: built {name} (torch {torch.__version__}, dynamo=True)",
              flush=True)
    (args.out / "manifest-torch2.json").write_text(json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
