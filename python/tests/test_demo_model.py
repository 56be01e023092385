"""The demo model (samples/demo): its training-time formulations equal the
seqrt ops they stand for, its state carries a sequence across calls, and
the training text's reader parses R's serialisation."""

import pathlib
import struct
import sys
import zlib

import pytest
import torch

import seqrt.export as sx

DEMO = pathlib.Path(__file__).resolve().parents[2] / "samples" / "demo"
sys.path.insert(0, str(DEMO))

import model as demo  # noqa: E402
import text as demo_text  # noqa: E402


def test_fast_selective_scan_equals_the_op():
    torch.manual_seed(0)
    b, d, n, length = 2, 6, 3, 11
    u, delta, z = (torch.randn(b, d, length) for _ in range(3))
    a = -torch.rand(d, n) - 0.1
    bm, cm = torch.randn(b, 1, n, length), torch.randn(b, 1, n, length)
    dskip, bias = torch.randn(d), torch.randn(d)
    y, h = demo.fast_selective_scan(u, delta, a, bm, cm, dskip, z, bias)
    y_op, h_op = sx.selective_scan(u, delta, a, bm, cm, dskip, z, bias, None)
    torch.testing.assert_close(y, y_op, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(h, h_op, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("length", [8, 10])  # whole chunks, and a partial one
def test_fast_neural_memory_equals_the_op(length):
    torch.manual_seed(1)
    b, heads, d, m, chunk = 2, 2, 4, 8, 4
    q = demo.unit_norm(torch.randn(b, heads, length, d))
    k = demo.unit_norm(torch.randn(b, heads, length, d))
    v = torch.randn(b, heads, length, d)
    theta = 0.05 * torch.rand(b, heads, length)
    eta = 0.6 * torch.rand(b, heads, length)
    alpha = 0.02 + 0.08 * torch.rand(b, heads, length)
    w1, w2 = torch.randn(heads, d, m) / 2, torch.randn(heads, m, d) / 3
    y, state = demo.fast_neural_memory(q, k, v, theta, eta, alpha, w1, w2, chunk)
    y_op, state_op = sx.neural_memory(q, k, v, theta, eta, alpha, w1, w2, None, None,
                                      depth=2, activation="gelu", chunk_size=chunk)
    torch.testing.assert_close(y, y_op, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(state, state_op, rtol=1e-5, atol=1e-5)


def small_model():
    torch.manual_seed(2)
    return demo.CharLM(demo.Config(vocab=11, dim=16, heads=2, d_state=4,
                                   memory_hidden=1)).eval()


@torch.no_grad()
def test_fast_forward_equals_the_ops():
    model = small_model()
    tokens = torch.randint(0, 11, (2, 9))
    fast, _ = model(tokens, fast=True)
    ops, _ = model(tokens)
    torch.testing.assert_close(fast, ops, rtol=1e-5, atol=1e-5)


@torch.no_grad()
def test_prefill_then_steps_equals_the_whole_sequence():
    """The state a call returns continues the sequence in the next call,
    from the zero state the runtime starts with (memory as a difference
    from its initial value, an empty KV cache)."""
    model = small_model()
    tokens = torch.randint(0, 11, (1, 10))
    whole, _ = model(tokens)
    state = {n: torch.zeros_like(t) for n, t in demo.example_state(model, 0).items()}
    parts = []
    for start, end in [(0, 6), (6, 7), (7, 8), (8, 10)]:
        logits, state = model(tokens[:, start:end], state)
        parts.append(logits)
    torch.testing.assert_close(torch.cat(parts, dim=1), whole, rtol=1e-5, atol=1e-5)
    assert state["past_key"].shape[2] == 10
    assert state["past_position"].tolist() == [10]


@torch.no_grad()
def test_memory_stays_bounded_on_a_long_sequence():
    """The memory's gate limits keep it finite however long it reads, even
    with the gates at their extremes (θ, η at their maxima, α minimal)."""
    model = small_model()
    memory = next(b for b in model.blocks if isinstance(b, demo.Memory))
    memory.gates.bias.data = torch.tensor([20.0, 20.0, -20.0]).repeat_interleave(2)
    tokens = torch.randint(0, 11, (1, 600))
    logits, state = model(tokens, fast=True)
    assert torch.isfinite(logits).all()
    assert torch.isfinite(state["past_memory"]).all()


def _xdr_character_vector(items):
    """What R's serialize(xdr) writes for a character vector."""
    body = struct.pack(">iii", 3, 0x040201, 0x030500) + struct.pack(">i", 5) + b"UTF-8"
    body += struct.pack(">ii", demo_text.STRSXP, len(items))
    for item in items:
        if item is None:
            body += struct.pack(">ii", demo_text.CHARSXP, -1)
        else:
            raw = item.encode("utf-8")
            body += struct.pack(">ii", 0x00048000 | demo_text.CHARSXP, len(raw)) + raw
    return b"X\n" + body


def _rdb(*blobs):
    """An .rdb file: per object a 4-byte length, then its zlib stream."""
    return b"".join(struct.pack(">i", len(b)) + zlib.compress(b) for b in blobs)


def test_text_reader_parses_an_rdb_of_character_vectors():
    first = ["It is a truth", None, "universally acknowledged"]
    second = ["Emma Woodhouse, handsome, clever, and rich"]
    data = _rdb(_xdr_character_vector(first), _xdr_character_vector(second))
    assert demo_text.read_rdb(data) == [["It is a truth", "", "universally acknowledged"],
                                        second]
    with pytest.raises(ValueError, match="truncated"):
        demo_text.read_rdb(data[:-5])


def test_text_reader_rejects_other_types():
    blob = bytearray(_xdr_character_vector(["a"]))
    type_at = 2 + 12 + 4 + 5
    blob[type_at:type_at + 4] = struct.pack(">i", 14)  # a numeric vector
    with pytest.raises(ValueError, match="expected a character vector"):
        demo_text._character_vector(bytes(blob))
