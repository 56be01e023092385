"""Runs one .onnx in onnxruntime in its own process (so that its peak RSS is
its own): python ort_worker.py MODEL INPUT_DIR OUTPUT_DIR REPEAT THREADS SPIN
(SPIN 0: idle pool threads block instead of spinning).
Inputs are INPUT_DIR/<input name>.npy; outputs go to OUTPUT_DIR/<name>.npy.
Prints one JSON line: session creation ms and every run's ms. Imports only
numpy and onnxruntime, so that torch's memory is not counted."""

import json
import pathlib
import sys
import time

import numpy as np
import onnxruntime as ort


def main(model: str, input_dir: str, output_dir: str, repeat: int,
         threads: int, spin: bool) -> None:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning",
                                     "1" if spin else "0")
    start = time.perf_counter()
    session = ort.InferenceSession(model, options,
                                   providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter() - start) * 1e3
    feeds = {i.name: np.load(pathlib.Path(input_dir) / f"{i.name}.npy")
             for i in session.get_inputs()}
    run_ms = []
    for _ in range(repeat):
        start = time.perf_counter()
        outputs = session.run(None, feeds)
        run_ms.append((time.perf_counter() - start) * 1e3)
    out = pathlib.Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for meta, value in zip(session.get_outputs(), outputs):
        np.save(out / f"{meta.name}.npy", value)
    print(json.dumps({"create_ms": create_ms, "run_ms": run_ms}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
         int(sys.argv[5]), sys.argv[6] == "1")
