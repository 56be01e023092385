"""Hugging Face exports as users bring them: transformers' GPT-2, Llama,
BERT and Mamba with seeded random weights, exported by the model zoo's code
(tests/zoo/zoo_exports.py: `decoder_pair`, whose wrappers flatten
past_key_values into past_key_values.<i>.key/value → present.<i>.key/value,
and torch.onnx.export with dynamic axes at opset 17).

Each phase is its own export at its own sizes (the file's key names them).
The decode rows feed random past tensors of the given length, one new
token and, for Llama, an all-ones attention_mask of past + 1; the exports
derive the positions from the past's length as transformers does.
"""

import pathlib
import sys
from typing import Callable, Dict, List

import numpy as np
import onnx
import torch

from .models import OPSET, Case

ZOO = pathlib.Path(__file__).resolve().parents[2] / "tests" / "zoo"


def _zoo():
    """tests/zoo/zoo_exports (imports transformers: only for these models)."""
    if str(ZOO) not in sys.path:
        sys.path.insert(0, str(ZOO))
    import zoo_exports
    return zoo_exports


def graph_feeds(path: pathlib.Path, feeds: Dict[str, np.ndarray]):
    """feeds for the inputs the written graph kept (torch.onnx.export drops
    the inputs it does not use), in the graph's order."""
    graph = onnx.load(str(path), load_external_data=False).graph
    names = [i.name for i in graph.input]
    missing = [n for n in names if n not in feeds]
    if missing:
        raise RuntimeError(f"{path}: graph inputs {missing} have no feed "
                           f"(feeds: {sorted(feeds)})")
    return {n: feeds[n] for n in names}


def _zoo_case(model: str, phase: str, key: str, tokens: int,
              builder: Callable, **sizes) -> Case:
    """A Case whose file a zoo builder (path, opset, **sizes) writes; its
    first step's inputs are the feeds."""

    def write(path: pathlib.Path) -> Dict[str, np.ndarray]:
        torch.manual_seed(0)
        entry = builder(path, OPSET, **sizes)
        return graph_feeds(path, entry["steps"][0])

    return Case(model, phase, key, tokens, False, write)


def _decoder_cases(model: str, stem: str, pair, quick: bool) -> List[Case]:
    prefill, decode = pair
    prompts, pasts = ((16,), (8,)) if quick else ((64, 512), (64, 1024))
    cases = [_zoo_case(model, f"prefill {n}", f"{stem}_prefill{n}", n,
                       prefill, length=n) for n in prompts]
    cases += [_zoo_case(model, f"decode step, past {n}", f"{stem}_decode{n}", 1,
                        decode, past_len=n) for n in pasts]
    return cases


def hf_gpt2_cases(quick: bool) -> List[Case]:
    """GPT2LMHeadModel, no attention_mask input (as the zoo's gpt2)."""
    import transformers as tf
    zoo = _zoo()
    vocab, dim, heads, depth, positions = ((1000, 64, 4, 2, 64) if quick else
                                           (8000, 256, 4, 4, 1152))
    cfg = tf.GPT2Config(vocab_size=vocab, n_positions=positions,
                            n_embd=dim, n_layer=depth, n_head=heads)
    pair = zoo.decoder_pair(lambda: tf.GPT2LMHeadModel(cfg).eval(), depth,
                            heads, dim // heads, False,
                            "transformers GPT2LMHeadModel", vocab)
    stem = f"hf_gpt2_l{depth}_d{dim}_h{heads}_v{vocab}_p{positions}"
    return _decoder_cases("hf_gpt2", stem, pair, quick)


def hf_llama_cases(quick: bool) -> List[Case]:
    """LlamaForCausalLM (GQA, RoPE, RMSNorm, SwiGLU) with attention_mask."""
    import transformers as tf
    zoo = _zoo()
    vocab, dim, ffn, depth, heads, kv_heads, positions = (
        (1000, 64, 128, 2, 4, 2, 64) if quick else
        (8000, 256, 688, 4, 8, 2, 1152))
    cfg = tf.LlamaConfig(vocab_size=vocab, hidden_size=dim,
                             intermediate_size=ffn, num_hidden_layers=depth,
                             num_attention_heads=heads,
                             num_key_value_heads=kv_heads,
                             max_position_embeddings=positions)
    pair = zoo.decoder_pair(lambda: tf.LlamaForCausalLM(cfg).eval(), depth,
                            kv_heads, dim // heads, True,
                            "transformers LlamaForCausalLM", vocab)
    stem = (f"hf_llama_l{depth}_d{dim}_f{ffn}_h{heads}kv{kv_heads}_v{vocab}"
            f"_p{positions}")
    return _decoder_cases("hf_llama", stem, pair, quick)


def hf_bert_cases(quick: bool) -> List[Case]:
    """BertModel at all-MiniLM-L6-v2's size; input_ids, an all-ones
    attention_mask and zero token_type_ids; last_hidden_state out."""
    import transformers as tf
    zoo = _zoo()
    vocab, dim, heads, ffn, depth = ((1000, 64, 4, 128, 2) if quick else
                                     (30522, 384, 12, 1536, 6))
    cfg = tf.BertConfig(vocab_size=vocab, hidden_size=dim,
                            num_hidden_layers=depth, num_attention_heads=heads,
                            intermediate_size=ffn)

    def encoder(path: pathlib.Path, opset: int, seq: int) -> Dict:
        model = tf.BertModel(cfg).eval()
        ids = zoo.token_ids(1, seq, vocab)
        names = ["input_ids", "attention_mask", "token_type_ids"]
        args = [ids, torch.ones_like(ids), torch.zeros_like(ids)]
        zoo.export(zoo.EncoderOutput(model), path, args, names,
                   ["last_hidden_state"], opset,
                   {n: {0: "batch", 1: "seq"} for n in names})
        return {"steps": [zoo.numpy_inputs(names, args)]}

    stem = f"hf_bert_l{depth}_d{dim}_h{heads}_f{ffn}_v{vocab}"
    return [_zoo_case("hf_bert", f"encoder seq {seq}", f"{stem}_s{seq}", seq,
                      encoder, seq=seq) for seq in ((32,) if quick else (128, 512))]


def hf_mamba_cases(quick: bool) -> List[Case]:
    """MambaForCausalLM on its naive path (no CUDA kernels), prefill: the
    tracer unrolls the selective scan's Python loop into one copy of the
    step per token (the zoo's mamba_prefill export at these sizes)."""
    import transformers as tf
    zoo = _zoo()
    vocab, dim, depth = (1000, 64, 2) if quick else (8000, 128, 2)
    cfg = tf.MambaConfig(vocab_size=vocab, hidden_size=dim, state_size=16,
                         num_hidden_layers=depth, expand=2, conv_kernel=4)

    def prefill(path: pathlib.Path, opset: int, length: int) -> Dict:
        model = tf.MambaForCausalLM(cfg).eval()
        ids = zoo.token_ids(1, length, vocab)
        zoo.export(zoo.DecoderPrefill(model, False), path, [ids],
                   ["input_ids"], ["logits"], opset,
                   {"input_ids": {0: "batch", 1: "seq"}})
        return {"steps": [{"input_ids": ids.numpy()}]}

    stem = f"hf_mamba_l{depth}_d{dim}_n16_v{vocab}"
    return [_zoo_case("hf_mamba", f"prefill {n} (unrolled)",
                      f"{stem}_prefill{n}", n, prefill, length=n)
            for n in ((16,) if quick else (64, 256))]


MODELS = {"hf_gpt2": hf_gpt2_cases, "hf_llama": hf_llama_cases,
          "hf_bert": hf_bert_cases, "hf_mamba": hf_mamba_cases}
