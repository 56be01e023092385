"""The zoo's decoder exports driven step by step with a fixed-capacity KV
cache (Session(kv_cache_capacity=...), compiler/passes/fixed_capacity_kv_
cache.h) give the outputs of the same Stream growing its cache by
concatenation, which test_zoo.py checks against onnxruntime."""

import numpy as np
import pytest

import seqrt

DECODERS = ["gpt2_decode", "llama_decode"]
PROMPT, STEPS, CAPACITY = 12, 8, 24


def feeds(session, tokens, past):
    out = {"input_ids": tokens}
    if "attention_mask" in [i.name for i in session.get_inputs()]:
        out["attention_mask"] = np.ones((1, past + tokens.shape[1]), np.int64)
    return out


@pytest.mark.parametrize("model", DECODERS)
def test_fixed_capacity_cache_equals_the_growing_one(zoo, model):
    path = zoo / model / "model.onnx"
    growing = seqrt.Session(path)
    capped = seqrt.Session(path, kv_cache_capacity=CAPACITY)
    ids = np.random.default_rng(0).integers(0, 1000, (1, PROMPT + STEPS))
    a, b = seqrt.Stream(growing), seqrt.Stream(capped)
    chunks = [ids[:, :PROMPT]] + [ids[:, t:t + 1]
                                  for t in range(PROMPT, PROMPT + STEPS)]
    past = 0
    for chunk in chunks:
        want = a.step(feeds(growing, chunk, past))
        got = b.step(feeds(capped, chunk, past))
        for x, y in zip(got, want):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{model} at {past} cached")
        past += chunk.shape[1]
    # The capacity is a hard limit, and a refused step keeps the stream.
    with pytest.raises(seqrt.InvalidArgumentError, match="KV cache is full"):
        b.step(feeds(capped, ids[:, :CAPACITY - past + 1], past))
    b.step(feeds(capped, ids[:, :1], past))


def test_a_model_without_kv_cache_says_so(zoo):
    with pytest.raises(seqrt.UnsupportedError, match="has no KV cache"):
        seqrt.Session(zoo / "mamba_decode" / "model.onnx", kv_cache_capacity=8)
