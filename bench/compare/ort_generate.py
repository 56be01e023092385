"""Greedy generation in onnxruntime with its growing concat cache, for the
per-token time `seqrt generate` is compared with (bench/README.md):

    python bench/compare/ort_generate.py DECODER.onnx TOKENS [THREADS]

DECODER.onnx is a decoder export with past_key_values.N.key/value inputs
and present.N.key/value outputs (the zoo's and hf_gpt2's decode files); the
first step prefills 5 tokens from an empty past, each later step feeds the
argmax token and the last step's presents. Idle threads sleep, as in
compare_onnxruntime.py. Prints the prefill time and the decode ms per token
(mean, first 50, last 50)."""

import sys
import time

import numpy as np
import onnxruntime as ort


def main(model: str, tokens: int, threads: int) -> None:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model, options,
                                   providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    past = {name: np.zeros((1, info.shape[1], 0, info.shape[3]), np.float32)
            for name, info in inputs.items() if name.startswith("past")}
    ids = np.array([[1, 2, 3, 4, 5]], np.int64)
    times = []
    for _ in range(tokens + 1):
        length = next(iter(past.values())).shape[2]
        feeds = {"input_ids": ids, **past}
        if "attention_mask" in inputs:
            feeds["attention_mask"] = np.ones((1, length + ids.shape[1]),
                                              np.int64)
        if "position_ids" in inputs:
            feeds["position_ids"] = np.arange(
                length, length + ids.shape[1], dtype=np.int64)[None]
        start = time.perf_counter()
        result = dict(zip(outputs, session.run(None, feeds)))
        times.append((time.perf_counter() - start) * 1e3)
        ids = np.array([[int(result["logits"][0, -1].argmax())]], np.int64)
        for name in past:
            past[name] = result[name.replace("past_key_values", "present")]
    decode = times[1:]
    print(f"onnxruntime: prefill {times[0]:.2f} ms; decode {len(decode)} "
          f"tokens: {np.mean(decode):.3f} ms per token (first 50 "
          f"{np.mean(decode[:50]):.3f}, last 50 {np.mean(decode[-50:]):.3f})")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]),
         int(sys.argv[3]) if len(sys.argv) > 3 else 2)
