#!/usr/bin/env python3
"""Throughput and latency of seqrt.serve on this machine: requests/s and
p50/p99 latency at several client counts, with batching on and off, with
1 and 2 replicas, beside the same model run in-process by seqrt.Session
(what serving adds). Closed loop: each client sends its next request when
the last one is answered.

    build/venv/bin/python bench/serve_bench.py MODEL.onnx [--seq 16]
        [--clients 1,8,32] [--replicas 1,2] [--seconds 10] [--json]

The model must take int64 token inputs of shape (batch, seq) (BERT-like:
input_ids, attention_mask, token_type_ids), e.g. the zoo's minilm_real.
"""

import argparse
import concurrent.futures
import json
import socket
import threading
import time

import numpy as np
import ray
import requests
from ray import serve

import seqrt
from seqrt.serve import ModelConfig, ServerConfig, build_app
from seqrt.serve.codec import NPZ, npz_bytes


def feeds_for(session, seq, rng):
    feeds = {}
    for arg in session.get_inputs():
        if arg.name == "input_ids":
            feeds[arg.name] = rng.integers(0, 1000, (1, seq), dtype=np.int64)
        elif arg.name == "attention_mask":
            feeds[arg.name] = np.ones((1, seq), np.int64)
        else:
            feeds[arg.name] = np.zeros((1, seq), np.int64)
    return feeds


def closed_loop(send, clients, seconds):
    """Latencies (s) of every request answered in `seconds`."""
    latencies, lock = [], threading.Lock()
    stop = time.perf_counter() + seconds

    def client():
        mine = []
        while time.perf_counter() < stop:
            began = time.perf_counter()
            send()
            mine.append(time.perf_counter() - began)
        with lock:
            latencies.extend(mine)

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client) for _ in range(clients)]:
            future.result()
    return latencies


def row(label, clients, latencies, seconds):
    ms = np.array(latencies) * 1000
    return (f"| {label} | {clients} | {len(ms) / seconds:.1f} | "
            f"{np.percentile(ms, 50):.1f} | {np.percentile(ms, 99):.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--replicas", default="1,2")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--threads", type=int, default=1,
                        help="seqrt threads per replica")
    parser.add_argument("--json", action="store_true",
                        help="JSON bodies (default: .npz both ways, what a "
                             "client that cares about speed sends)")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    rng = np.random.default_rng(0)
    session = seqrt.Session(args.model, num_threads=args.threads)
    feeds = feeds_for(session, args.seq, rng)
    print("| setup | clients | requests/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for c in clients:  # in-process: what serving adds is the difference
        latencies = closed_loop(lambda: session.run(None, feeds), c,
                                args.seconds)
        print(row(f"in-process Session, {args.threads} thread(s)", c,
                  latencies, args.seconds), flush=True)

    ray.init(include_dashboard=False, log_to_driver=False,
             num_cpus=8, object_store_memory=256 << 20)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    if args.json:
        body = json.dumps({"inputs": {k: v.tolist()
                                      for k, v in feeds.items()}}).encode()
        headers = {"content-type": "application/json"}
    else:
        body = npz_bytes(feeds)
        headers = {"content-type": NPZ, "accept": NPZ}
    url = f"http://127.0.0.1:{port}/v1/models/model:run"
    local = threading.local()

    def send():
        if not hasattr(local, "http"):
            local.http = requests.Session()
        answer = local.http.post(url, data=body, headers=headers)
        answer.raise_for_status()

    try:
        for replicas in [int(r) for r in args.replicas.split(",")]:
            for batching in (False, True):
                config = ServerConfig([ModelConfig(
                    args.model, name="model", replicas=replicas,
                    num_threads=args.threads, batching=batching,
                    max_batch_size=32, batch_wait_ms=2)])
                serve.run(build_app(config), name="seqrt", route_prefix="/")
                closed_loop(send, 4, 1.0)  # warm up
                label = (f"{replicas} replica(s), batching "
                         f"{'on' if batching else 'off'}")
                for c in clients:
                    print(row(label, c, closed_loop(send, c, args.seconds),
                              args.seconds), flush=True)
                serve.delete("seqrt")
    finally:
        serve.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    main()
