"""The zoo's exported models: seeded small configs of real `transformers`
architectures and torch.nn recurrent layers, exported with torch.onnx as a
user would (torch 1.13, opset 17). Each builder writes the model and returns
its manifest entry: source, steps (input dicts, one per call) and, for
streamed models, `state` mapping each state output to the input it feeds at
the next step.
"""

import pathlib
from typing import Dict, List, Sequence

import numpy as np
import torch
import transformers as tf

VOCAB = 1000


def export(module: torch.nn.Module, path: pathlib.Path, args: Sequence,
           input_names: List[str], output_names: List[str], opset: int,
           dynamic_axes: Dict = None) -> None:
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, tuple(args), str(path),
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes or {},
                          opset_version=opset, do_constant_folding=True)


def numpy_inputs(names: Sequence[str], args: Sequence) -> Dict[str, np.ndarray]:
    return {n: a.numpy() for n, a in zip(names, args)}


def token_ids(batch: int, length: int, vocab: int = VOCAB) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length), dtype=torch.int64)


# ---- decoders with past_key_values (prefill and one decode step) ----------

class DecoderWithPast(torch.nn.Module):
    """Flattens the (key, value) pairs of the HF cache into named tensors,
    as optimum's decoder exports do: past_key_values.<i>.key/value in,
    present.<i>.key/value out (seqrt pairs them as state by name)."""

    def __init__(self, model, layers: int, with_mask: bool):
        super().__init__()
        self.model, self.layers, self.with_mask = model, layers, with_mask

    def forward(self, input_ids, *rest):
        mask = rest[0] if self.with_mask else None
        flat = rest[1:] if self.with_mask else rest
        past = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, attention_mask=mask,
                         past_key_values=past, use_cache=True)
        presents = [t for pair in out.past_key_values for t in pair]
        return (out.logits, *presents)


class DecoderPrefill(torch.nn.Module):
    def __init__(self, model, with_mask: bool):
        super().__init__()
        self.model, self.with_mask = model, with_mask

    def forward(self, input_ids, *rest):
        mask = rest[0] if self.with_mask else None
        return self.model(input_ids=input_ids, attention_mask=mask,
                          use_cache=False).logits


def past_names(layers: int, prefix: str) -> List[str]:
    return [f"{prefix}.{i}.{kind}" for i in range(layers)
            for kind in ("key", "value")]


def decoder_pair(make_model, layers: int, kv_heads: int, head_dim: int,
                 with_mask: bool, source: str, vocab: int = VOCAB):
    """Builders for the prefill and the decode-with-past export of the model
    `make_model()` returns (made per build, after the builder seeds torch).
    The zoo uses their default sizes; bench/compare_onnxruntime.py passes
    its own prompt and past lengths."""

    def prefill(path: pathlib.Path, opset: int, length: int = 16) -> Dict:
        ids = token_ids(1, length, vocab)
        args = [ids] + ([torch.ones_like(ids)] if with_mask else [])
        names = ["input_ids"] + (["attention_mask"] if with_mask else [])
        axes = {n: {0: "batch", 1: "seq"} for n in names}
        export(DecoderPrefill(make_model(), with_mask), path, args, names,
               ["logits"], opset, axes)
        return {"source": source + f", prefill {length} tokens",
                "steps": [numpy_inputs(names, args)]}

    def decode(path: pathlib.Path, opset: int, past_len: int = 8) -> Dict:
        ids = token_ids(1, 1, vocab)
        pasts = [torch.randn(1, kv_heads, past_len, head_dim)
                 for _ in range(2 * layers)]
        mask = [torch.ones(1, past_len + 1, dtype=torch.int64)] if with_mask else []
        names = (["input_ids"] + (["attention_mask"] if with_mask else [])
                 + past_names(layers, "past_key_values"))
        outputs = ["logits"] + past_names(layers, "present")
        axes = {n: {0: "batch", 2: "past"} for n in past_names(layers, "past_key_values")}
        axes.update({"input_ids": {0: "batch", 1: "seq"}})
        if with_mask:
            axes["attention_mask"] = {0: "batch", 1: "total"}
        export(DecoderWithPast(make_model(), layers, with_mask), path,
               [ids] + mask + pasts, names, outputs, opset, axes)
        return {"source": source + f", one decode step with a past of {past_len}",
                "steps": [numpy_inputs(names, [ids] + mask + pasts)]}

    return prefill, decode


def gpt2():
    cfg = tf.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=64,
                        n_layer=2, n_head=4)
    return decoder_pair(lambda: tf.GPT2LMHeadModel(cfg).eval(), 2, 4, 16, False,
                        "transformers GPT2LMHeadModel (2 x 64), no mask input")


def llama():
    cfg = tf.LlamaConfig(vocab_size=VOCAB, hidden_size=96,
                         intermediate_size=192, num_hidden_layers=2,
                         num_attention_heads=6, num_key_value_heads=2,
                         max_position_embeddings=128)
    return decoder_pair(lambda: tf.LlamaForCausalLM(cfg).eval(), 2, 2, 16, True,
                        "transformers LlamaForCausalLM (2 x 96, GQA 6/2 heads,"
                        " RoPE, RMSNorm, SwiGLU), with attention_mask")


# ---- encoders --------------------------------------------------------------

class EncoderOutput(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        return self.model(*args).last_hidden_state


def t5_encoder(path: pathlib.Path, opset: int) -> Dict:
    cfg = tf.T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128,
                      num_layers=2, num_heads=4)
    model = tf.T5EncoderModel(cfg).eval()
    ids = token_ids(2, 12)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0
    names = ["input_ids", "attention_mask"]
    export(EncoderOutput(model), path, [ids, mask], names,
           ["last_hidden_state"], opset,
           {n: {0: "batch", 1: "seq"} for n in names})
    return {"source": "transformers T5EncoderModel (2 x 64), padded batch of 2",
            "steps": [numpy_inputs(names, [ids, mask])]}


def whisper_encoder(path: pathlib.Path, opset: int) -> Dict:
    cfg = tf.WhisperConfig(vocab_size=VOCAB, d_model=64, encoder_layers=2,
                           encoder_attention_heads=4, decoder_layers=1,
                           decoder_attention_heads=4, encoder_ffn_dim=128,
                           decoder_ffn_dim=128, num_mel_bins=80,
                           max_source_positions=50)
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    model = WhisperEncoder(cfg).eval()
    features = torch.randn(1, 80, 100)
    export(EncoderOutput(model), path, [features], ["input_features"],
           ["last_hidden_state"], opset)
    return {"source": "transformers Whisper encoder (conv stem + 2 x 64)",
            "steps": [{"input_features": features.numpy()}]}


# ---- Mamba (the naive path: no CUDA kernels) -------------------------------

def mamba_config():
    return tf.MambaConfig(vocab_size=VOCAB, hidden_size=64, state_size=16,
                          num_hidden_layers=2, expand=2, conv_kernel=4)


def mamba_prefill(path: pathlib.Path, opset: int) -> Dict:
    model = tf.MambaForCausalLM(mamba_config()).eval()
    ids = token_ids(1, 24)
    export(DecoderPrefill(model, False), path, [ids], ["input_ids"],
           ["logits"], opset, {"input_ids": {0: "batch", 1: "seq"}})
    return {"source": "transformers MambaForCausalLM (2 x 64, naive path),"
                      " prefill 24 tokens",
            "steps": [{"input_ids": ids.numpy()}]}


class MambaStep(torch.nn.Module):
    """One decode step with the conv and SSM states as named tensors."""

    def __init__(self, model, layers: int):
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, input_ids, *states):
        from transformers.models.mamba.modeling_mamba import MambaCache
        cache = MambaCache(self.model.config, input_ids.shape[0],
                           dtype=torch.float32)
        for i in range(self.layers):
            cache.conv_states[i] = states[2 * i].clone()
            cache.ssm_states[i] = states[2 * i + 1].clone()
        cache.seqlen_offset = 1  # a decode step, not a prefill
        out = self.model(input_ids=input_ids, cache_params=cache,
                         use_cache=True)
        flat = []
        for i in range(self.layers):
            flat += [out.cache_params.conv_states[i],
                     out.cache_params.ssm_states[i]]
        return (out.logits, *flat)


def mamba_decode(path: pathlib.Path, opset: int) -> Dict:
    cfg = mamba_config()
    model = tf.MambaForCausalLM(cfg).eval()
    inner = cfg.expand * cfg.hidden_size
    names, outs, steps_state = ["input_ids"], ["logits"], []
    for i in range(2):
        names += [f"past_conv.{i}", f"past_ssm.{i}"]
        outs += [f"present_conv.{i}", f"present_ssm.{i}"]
        steps_state += [torch.randn(1, inner, cfg.conv_kernel),
                        torch.randn(1, inner, cfg.state_size)]
    ids = token_ids(1, 1)
    export(MambaStep(model, 2), path, [ids] + steps_state, names, outs, opset)
    steps = [{"input_ids": ids.numpy()}]
    steps[0].update(numpy_inputs(names[1:], steps_state))
    for _ in range(3):
        steps.append({"input_ids": token_ids(1, 1).numpy()})
    return {"source": "transformers MambaForCausalLM (2 x 64), decode steps"
                      " with cache_params, streamed 4 steps",
            "state": {o: n for o, n in zip(outs[1:], names[1:])},
            "steps": steps}


# ---- torch.nn recurrent layers (ONNX LSTM / GRU / RNN) ----------------------

class Recurrent(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *state):
        y, new_state = self.rnn(x, state if len(state) > 1 else state[0])
        if isinstance(new_state, tuple):
            return (y, *new_state)
        return y, new_state


def recurrent(kind: str, streamed: bool, **kwargs):
    def build(path: pathlib.Path, opset: int) -> Dict:
        rnn = getattr(torch.nn, kind)(input_size=20, hidden_size=24, **kwargs)
        layers = kwargs.get("num_layers", 1)
        dirs = 2 if kwargs.get("bidirectional") else 1
        batch_first = kwargs.get("batch_first", False)
        states = ["h"] + (["c"] if kind == "LSTM" else [])

        def chunk(t):
            return torch.randn(3, t, 20) if batch_first else torch.randn(t, 3, 20)

        state0 = [torch.randn(layers * dirs, 3, 24) for _ in states]
        names = ["x"] + [f"past_{s}" for s in states]
        outs = ["y"] + [f"present_{s}" for s in states]
        seq_axis = 1 if batch_first else 0
        export(Recurrent(rnn), path, [chunk(10)] + state0, names, outs, opset,
               {"x": {seq_axis: "time"}, "y": {seq_axis: "time"}})
        steps = [numpy_inputs(names, [chunk(10)] + state0)]
        entry = {"source": f"torch.nn.{kind}({kwargs})"}
        if streamed:
            steps += [{"x": chunk(t).numpy()} for t in (7, 1, 12)]
            entry["state"] = {o: n for o, n in zip(outs[1:], names[1:])}
            entry["source"] += ", streamed 4 chunks"
        entry["steps"] = steps
        return entry

    return build


_gpt2_prefill, _gpt2_decode = gpt2()
_llama_prefill, _llama_decode = llama()

BUILDERS = {
    "gpt2_prefill": _gpt2_prefill,
    "gpt2_decode": _gpt2_decode,
    "llama_prefill": _llama_prefill,
    "llama_decode": _llama_decode,
    "t5_encoder": t5_encoder,
    "whisper_encoder": whisper_encoder,
    "mamba_prefill": mamba_prefill,
    "mamba_decode": mamba_decode,
    "lstm_bidirectional": recurrent("LSTM", False, num_layers=2,
                                    bidirectional=True, batch_first=True),
    "lstm_streamed": recurrent("LSTM", True, num_layers=1),
    "gru_streamed": recurrent("GRU", True, num_layers=2, batch_first=True),
    "rnn_tanh": recurrent("RNN", False, num_layers=1, bidirectional=True),
}
