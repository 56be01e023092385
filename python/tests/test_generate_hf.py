"""`seqrt generate --tokenizer` on Hugging Face decoder exports: tiny
seeded GPT-2 and Llama models, exported with a KV cache as optimum does
(past_key_values.N.key/value -> present.N.key/value), whose vocabularies are
the tokenizer fixtures of tools/generate/testdata (made by the `tokenizers`
library). Greedy text through the CLI equals a greedy loop in PyTorch; the
end-of-sequence token, the position limit and mismatched files behave as
tools/README.md says."""

import json
import pathlib
import subprocess
from typing import List

import pytest
import torch
import transformers as tf
from tokenizers import Tokenizer
from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode

from conftest import REPO, seqrt_cli

TESTDATA = REPO / "tools" / "generate" / "testdata"
GPT2_TOKENIZER = TESTDATA / "gpt2_bpe.json"
LLAMA_TOKENIZER = TESTDATA / "llama_bpe.json"
PROMPT = "The lighthouse keeper said: "


class DecoderWithPast(torch.nn.Module):
    def __init__(self, model, layers: int, inputs: List[str]):
        super().__init__()
        self.model, self.layers, self.inputs = model, layers, inputs

    def forward(self, input_ids, *rest):
        extra = dict(zip(self.inputs, rest))
        flat = rest[len(self.inputs):]
        past = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, past_key_values=past,
                         use_cache=True, **extra)
        return (out.logits, *[t for pair in out.past_key_values for t in pair])


def export_decoder(model, directory: pathlib.Path, kv_heads: int,
                   head_dim: int, inputs: List[str] = ()) -> pathlib.Path:
    """Writes model.onnx (a decode step with a KV cache, every length
    symbolic) and config.json into `directory`."""
    directory.mkdir()
    layers = model.config.num_hidden_layers
    past_len = 3
    ids = torch.tensor([[5, 6]])
    extra = {"attention_mask": torch.ones(1, past_len + 2, dtype=torch.int64),
             "position_ids": torch.tensor([[past_len, past_len + 1]])}
    pasts = [torch.randn(1, kv_heads, past_len, head_dim)
             for _ in range(2 * layers)]
    past_names = [f"past_key_values.{i}.{k}" for i in range(layers)
                  for k in ("key", "value")]
    present_names = [n.replace("past_key_values", "present") for n in past_names]
    axes = {n: {2: "past"} for n in past_names}
    axes.update({n: {2: "total"} for n in present_names})
    axes["input_ids"] = {1: "seq"}
    axes["logits"] = {1: "seq"}
    axes.update({"attention_mask": {1: "total"}, "position_ids": {1: "seq"}})
    path = directory / "model.onnx"
    with torch.no_grad():
        torch.onnx.export(DecoderWithPast(model, layers, list(inputs)),
                          (ids, *[extra[n] for n in inputs], *pasts), str(path),
                          input_names=["input_ids", *inputs, *past_names],
                          output_names=["logits", *present_names],
                          dynamic_axes={k: v for k, v in axes.items()
                                        if k in ["input_ids", "logits", *inputs,
                                                 *past_names, *present_names]},
                          opset_version=17, do_constant_folding=True)
    model.config.to_json_file(str(directory / "config.json"))
    return path


def tiny_gpt2(vocab: int, eos: int, positions: int = 64):
    torch.manual_seed(0)
    cfg = tf.GPT2Config(vocab_size=vocab, n_positions=positions, n_embd=32,
                        n_layer=2, n_head=2, eos_token_id=eos,
                        bos_token_id=eos, initializer_range=0.3)
    return tf.GPT2LMHeadModel(cfg).eval()


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> pathlib.Path:
    vocab = Tokenizer.from_file(str(GPT2_TOKENIZER)).get_vocab_size()
    directory = tmp_path_factory.mktemp("gpt2") / "export"
    model = tiny_gpt2(vocab, eos=0)
    export_decoder(model, directory, kv_heads=2, head_dim=16)
    torch.save(model.state_dict(), directory / "weights.pt")
    return directory


@torch.no_grad()
def greedy(model, ids: List[int], count: int, eos: List[int]) -> List[int]:
    """Greedy decoding by full recomputation: no cache, nothing shared with
    the export's code path."""
    out = []
    for _ in range(count):
        logits = model(input_ids=torch.tensor([ids + out])).logits[0, -1]
        top2 = torch.topk(logits, 2).values
        # A near tie could go either way in another float order: the
        # comparison would not test anything.
        assert float(top2[0] - top2[1]) > 1e-3, "near tie in the reference"
        token = int(torch.argmax(logits))
        if token in eos:
            break
        out.append(token)
    return out


def run_generate(model: pathlib.Path, tokenizer: pathlib.Path, *options):
    return subprocess.run(
        [seqrt_cli(), "generate", str(model), "--tokenizer", str(tokenizer),
         "--prompt", PROMPT, "--temperature", "0", "--backend", "cpu",
         *options], capture_output=True)


def streamed_bytes(stdout: bytes) -> bytes:
    """The text before the speeds."""
    end = stdout.rfind(b"\n\nprompt: ")
    assert end >= 0, stdout
    return stdout[:end]


def byte_level_text(tokenizer: Tokenizer, ids: List[int]) -> bytes:
    """The bytes of GPT-2 byte-level tokens (a character may be cut between
    tokens, so no decode to str)."""
    byte_of = {c: b for b, c in bytes_to_unicode().items()}
    return b"".join(bytes(byte_of[c] for c in tokenizer.id_to_token(i))
                    for i in ids)


def test_gpt2_greedy_text_equals_pytorch(gpt2_dir):
    tokenizer = Tokenizer.from_file(str(GPT2_TOKENIZER))
    model = tiny_gpt2(tokenizer.get_vocab_size(), eos=0)
    model.load_state_dict(torch.load(gpt2_dir / "weights.pt"))
    prompt = tokenizer.encode(PROMPT).ids
    expected = greedy(model, prompt, 30, eos=[0])
    proc = run_generate(gpt2_dir / "model.onnx", GPT2_TOKENIZER, "-n", "30")
    assert proc.returncode == 0, proc.stderr.decode()
    text = streamed_bytes(proc.stdout)
    assert text == PROMPT.encode() + byte_level_text(tokenizer, expected)
    assert len(expected) >= 5  # the comparison covers decode steps
    speeds = proc.stdout.decode(errors="replace")
    assert f"prompt: {len(prompt)} tokens in" in speeds
    assert "tokens/s (backend 'cpu')" in speeds


def test_kv_cache_capacity_forms_agree_and_bound_the_text(gpt2_dir):
    # The default holds the cache at prompt + --max-tokens, written in
    # place; 0 grows it by concatenation as the graph says: the same text.
    fixed = run_generate(gpt2_dir / "model.onnx", GPT2_TOKENIZER, "-n", "20")
    growing = run_generate(gpt2_dir / "model.onnx", GPT2_TOKENIZER, "-n", "20",
                           "--kv-capacity", "0")
    assert fixed.returncode == 0 and growing.returncode == 0, (
        fixed.stderr.decode() + growing.stderr.decode())
    assert streamed_bytes(fixed.stdout) == streamed_bytes(growing.stdout)
    # A capacity below the prompt is a one-line error naming it.
    small = run_generate(gpt2_dir / "model.onnx", GPT2_TOKENIZER,
                         "--kv-capacity", "4")
    assert small.returncode == 1, small.stdout
    assert "the KV cache is full: it holds 4 tokens" in small.stderr.decode()


def test_gpt2_stops_at_its_position_limit(gpt2_dir):
    proc = run_generate(gpt2_dir / "model.onnx", GPT2_TOKENIZER, "-n", "500",
                        "--ignore-eos")
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode(errors="replace")
    assert "stopped: the model's 64 positions are used up (n_positions in" in out
    prompt = len(Tokenizer.from_file(str(GPT2_TOKENIZER)).encode(PROMPT).ids)
    assert f"decode: {64 - prompt} tokens" in out


def test_end_of_sequence_token_stops_the_text(gpt2_dir, tmp_path):
    # generation_config.json names, as the end, the token greedy decoding
    # gives fourth.
    tokenizer = Tokenizer.from_file(str(GPT2_TOKENIZER))
    model = tiny_gpt2(tokenizer.get_vocab_size(), eos=0)
    model.load_state_dict(torch.load(gpt2_dir / "weights.pt"))
    expected = greedy(model, tokenizer.encode(PROMPT).ids, 6, eos=[0])
    export = tmp_path / "export"
    export.mkdir()
    (export / "model.onnx").symlink_to(gpt2_dir / "model.onnx")
    (export / "generation_config.json").write_text(
        json.dumps({"eos_token_id": [expected[3]]}))
    proc = run_generate(export / "model.onnx", GPT2_TOKENIZER, "-n", "30")
    assert proc.returncode == 0, proc.stderr.decode()
    assert streamed_bytes(proc.stdout) == (
        PROMPT.encode() + byte_level_text(tokenizer, expected[:3]))
    assert (f"stopped: end of sequence: token {expected[3]} (eos_token_id in"
            in proc.stdout.decode(errors="replace"))


def test_llama_with_mask_and_positions_equals_pytorch(tmp_path):
    tokenizer = Tokenizer.from_file(str(LLAMA_TOKENIZER))
    torch.manual_seed(1)
    cfg = tf.LlamaConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32,
                         intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128, eos_token_id=2,
                         bos_token_id=1, initializer_range=0.3)
    model = tf.LlamaForCausalLM(cfg).eval()
    path = export_decoder(model, tmp_path / "llama", kv_heads=2, head_dim=8,
                          inputs=["attention_mask", "position_ids"])
    prompt = tokenizer.encode(PROMPT).ids
    assert prompt[0] == 1  # <s> from the post-processor
    expected = greedy(model, prompt, 20, eos=[2])
    assert len(expected) >= 5
    proc = run_generate(path, LLAMA_TOKENIZER, "-n", "20")
    assert proc.returncode == 0, proc.stderr.decode()
    # Each token streamed: "▁" is a space, <0xXX> a byte.
    pieces = []
    for i in expected:
        token = tokenizer.id_to_token(i)
        if token.startswith("<0x") and len(token) == 6:
            pieces.append(bytes([int(token[3:5], 16)]))
        else:
            pieces.append(token.replace("▁", " ").encode())
    assert streamed_bytes(proc.stdout) == PROMPT.encode() + b"".join(pieces)


def test_mismatched_files_are_one_line_errors(gpt2_dir, tmp_path):
    def error_of(proc) -> str:
        assert proc.returncode == 1, proc.stdout
        err = proc.stderr.decode()
        assert err.startswith("seqrt: error: ") and err.count("\n") == 1, err
        return err

    # The Llama fixture has more tokens than this GPT-2 scores.
    err = error_of(run_generate(gpt2_dir / "model.onnx", LLAMA_TOKENIZER))
    assert f"tokenizer '{LLAMA_TOKENIZER}' has" in err
    assert "the tokenizer does not belong to this model" in err
    long_prompt = subprocess.run(
        [seqrt_cli(), "generate", str(gpt2_dir / "model.onnx"), "--tokenizer",
         str(GPT2_TOKENIZER), "--prompt", "word " * 80], capture_output=True)
    assert "more than the model's 64 positions (n_positions in" in error_of(
        long_prompt)
    bad = tmp_path / "tokenizer.json"
    bad.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}))
    err = error_of(run_generate(gpt2_dir / "model.onnx", bad))
    assert f"tokenizer file '{bad}': model.type 'WordPiece' is not supported" in err
