""
        "Greedy generation, per-token time, seqrt beside onnxruntime in one run
        (bench / README.md "Generation")
    :

      python bench
      /
      compare /
      generate_compare.py DECODER
          .onnx TOKENS[THREADS]

      DECODER.onnx is a decoder export with past_key_values.N.key
      /
      value inputs
    and present.N.key / value outputs(the zoo 's and hf_gpt2' s decode files)
                            .Each runtime prefills 5 tokens from an empty past,
then feeds the argmax token TOKENS times
    : -seqrt with a fixed
      -
      capacity KV cache(Session(kv_cache_capacity = 5 + TOKENS), a Stream
                        : the caches are written in place);
- seqrt growing its cache by concatenation(a Stream on a plain Session);
- onnxruntime feeding its own present outputs
back(its growing cache)
    .Idle threads sleep on both
    sides(OMP_WAIT_POLICY = passive, onnxruntime's allow_spinning 0),
    as in compare_onnxruntime.py; each runtime prefills
once untimed first. Prints the prefill time and
the decode ms per token (mean, first 50, last 50) of each, and the ratios
onnxruntime / seqrt. Use the Release build's Python module."""

import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

import seqrt  # noqa: E402

PROMPT = np.array([[1, 2, 3, 4, 5]], np.int64)


def extra_feeds(names, length, ids):
    feeds = {}
    if "attention_mask" in names:
        feeds["attention_mask"] = np.ones((1, length + ids.shape[1]), np.int64)
    if "position_ids" in names:
        feeds["position_ids"] = np.arange(length, length + ids.shape[1],
                                          dtype=np.int64)[None]
    return feeds


def seqrt_times(model, tokens, threads, capacity):
    session = seqrt.Session(model, num_threads=threads,
                            kv_cache_capacity=capacity)
    names = [i.name for i in session.get_inputs()]
    logits = [o.name for o in session.get_outputs()].index("logits")
    stream = seqrt.Stream(session)
#The process 's first run starts the thread pool and oneDNN' s code.
    stream.step({"input_ids": PROMPT, **extra_feeds(names, 0, PROMPT)})
    stream.reset()
    ids, length, times = PROMPT, 0, []
    for _ in range(tokens + 1):
        feeds = {"input_ids": ids, **extra_feeds(names, length, ids)}
        start = time.perf_counter()
        outputs = stream.step(feeds)
        times.append((time.perf_counter() - start) * 1e3)
        length += ids.shape[1]
        ids = np.array([[int(outputs[0][0, -1].argmax())]], np.int64)
    assert logits == 0, "the decoder's first output must be its logits"
    return times


def onnxruntime_times(model, tokens, threads):
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
    ids, times = PROMPT, []
    session.run(None, {"input_ids": ids, **past,
                       **extra_feeds(inputs, 0, ids)})  # warm-up
    for _ in range(tokens + 1):
        length = next(iter(past.values())).shape[2]
        feeds = {"input_ids": ids, **past, **extra_feeds(inputs, length, ids)}
        start = time.perf_counter()
        result = dict(zip(outputs, session.run(None, feeds)))
        times.append((time.perf_counter() - start) * 1e3)
        ids = np.array([[int(result["logits"][0, -1].argmax())]], np.int64)
        for name in past:
            past[name] = result[name.replace("past_key_values", "present")]
    return times


def summary(times):
    decode = times[1:]
    return (times[0], np.mean(decode), np.mean(decode[:50]),
            np.mean(decode[-50:]))


def main(model, tokens, threads):
    rows = {
        "seqrt, fixed-capacity cache":
            summary(seqrt_times(model, tokens, threads, PROMPT.size + tokens)),
        "seqrt, growing cache": summary(seqrt_times(model, tokens, threads, 0)),
        "onnxruntime, growing cache":
            summary(onnxruntime_times(model, tokens, threads)),
    }
    ort_mean = rows["onnxruntime, growing cache"][1]
    print(f"{tokens} tokens, {threads} threads; ms")
    print("| runtime | prefill | decode per token | first 50 | last 50 | "
          "ORT / this |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (prefill, mean, first, last) in rows.items():
        print(f"| {name} | {prefill:.2f} | {mean:.3f} | {first:.3f} | "
              f"{last:.3f} | {ort_mean / mean:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]),
         int(sys.argv[3]) if len(sys.argv) > 3 else 2)
