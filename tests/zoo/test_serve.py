"""seqrt.serve on a local Ray cluster over loopback: the zoo's MiniLM
export (stateless, batched along its batch dim) and the demo model (decode
sessions, text generation), each with 2 replicas. Every answer is checked
against a direct seqrt.Session or Stream; one replica of each is killed
under load. One cluster serves the whole module and is stopped after it."""

import concurrent.futures
import json
import pathlib
import re
import socket
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed")
from ray import serve  # noqa: E402

import seqrt  # noqa: E402
from seqrt.serve import ModelConfig, ServerConfig, build_app  # noqa: E402
from seqrt.serve.codec import NPY, NPZ, load_npz, npy_bytes, npz_bytes  # noqa: E402
from seqrt.serve.ingress import BATCH_HEADER  # noqa: E402

DEMO = pathlib.Path(__file__).resolve().parents[2] / "samples/demo/austen.seqrt"
MAX_BODY = 1 << 20
MAX_SESSIONS = 4  # per demo replica
TIMEOUT_S = 60  # per HTTP request: a hung server fails the test, not CI


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(zoo):
    ray.init(num_cpus=8, include_dashboard=False,
             object_store_memory=256 << 20, log_to_driver=False)
    port = free_port()
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        config = ServerConfig([
            ModelConfig(str(zoo / "minilm_real/model.onnx"), name="minilm",
                        replicas=2, num_threads=1, max_batch_size=8,
                        batch_wait_ms=20),
            ModelConfig(str(DEMO), name="demo", replicas=2, num_threads=1,
                        max_sessions=MAX_SESSIONS)],
            max_body_bytes=MAX_BODY, max_new_tokens=64)
        serve.run(build_app(config), name="seqrt", route_prefix="/")
        yield f"http://127.0.0.1:{port}"
    finally:
        serve.shutdown()
        ray.shutdown()


def call(url, method="GET", body=None, content_type="application/json",
         accept=None):
    """(status, headers, body) of one HTTP request."""
    headers = {"content-type": content_type}
    if accept:
        headers["accept"] = accept
    request = urllib.request.Request(url, data=body, method=method,
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def run_json(server, name, inputs):
    return call(f"{server}/v1/models/{name}:run", "POST",
                json.dumps({"inputs": {k: v.tolist()
                                       for k, v in inputs.items()}}).encode())


def outputs_of(body):
    return {name: np.array(value["data"], dtype=value["dtype"]).reshape(
        value["shape"]) for name, value in json.loads(body)["outputs"].items()}


def minilm_inputs(rng, rows, seq):
    return {"input_ids": rng.integers(0, 1000, (rows, seq), dtype=np.int64),
            "attention_mask": np.ones((rows, seq), np.int64),
            "token_type_ids": np.zeros((rows, seq), np.int64)}


@pytest.fixture(scope="module")
def minilm(zoo):
    return seqrt.Session(str(zoo / "minilm_real/model.onnx"))


def replica_actors(deployment):
    """{replica id: actor name} of a deployment's live replicas."""
    actors = {}
    for actor in ray.util.list_named_actors(all_namespaces=True):
        name = actor["name"]
        if actor["namespace"] == "serve" and f"#{deployment}#" in name:
            actors[name.rsplit("#", 1)[1]] = name
    return actors


def kill_replica(deployment, replica_id):
    name = replica_actors(deployment)[replica_id]
    ray.kill(ray.get_actor(name, namespace="serve"), no_restart=True)


def test_models_are_listed(server):
    status, _, body = call(f"{server}/v1/models")
    assert status == 200
    models = {m["name"]: m for m in json.loads(body)["models"]}
    assert models["minilm"]["batch_dim"] == "batch"
    assert models["demo"]["generates"] and models["demo"]["batch_dim"] is None


def test_64_concurrent_runs_equal_direct_runs(server, minilm):
    rng = np.random.default_rng(0)
    requests = [minilm_inputs(rng, rows=1 + i % 3, seq=(5, 9)[i % 2])
                for i in range(64)]
    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(lambda r: run_json(server, "minilm", r),
                                requests))
    shared = []
    for inputs, (status, headers, body) in zip(requests, answers):
        assert status == 200, body
        expected, = minilm.run(["last_hidden_state"], inputs)
        np.testing.assert_allclose(outputs_of(body)["last_hidden_state"],
                                   expected, rtol=1e-4, atol=1e-5)
        shared.append(int(headers[BATCH_HEADER]))
    assert max(shared) > 1, "no two concurrent requests shared a run"


def test_npy_and_npz_bodies(server, minilm):
    inputs = minilm_inputs(np.random.default_rng(1), 2, 4)
    status, headers, body = call(f"{server}/v1/models/minilm:run", "POST",
                                 npz_bytes(inputs), NPZ, accept=NPZ)
    assert status == 200 and headers["content-type"] == NPZ
    expected, = minilm.run(["last_hidden_state"], inputs)
    np.testing.assert_allclose(load_npz(body)["last_hidden_state"], expected,
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("path, body, content_type, status, message", [
    ("minilm:run", json.dumps({"inputs": {"ids": [[1]]}}).encode(),
     "application/json", 400, "has no input 'ids'"),
    ("minilm:run?input=input_ids", npy_bytes(np.ones((1, 3), np.int32)), NPY,
     400, "input 'input_ids' of model 'minilm' is int64, got int32"),
    ("minilm:run", npz_bytes(minilm_inputs(np.random.default_rng(2), 1, 3) |
                             {"token_type_ids": np.zeros((1, 3, 1), np.int64)}),
     NPZ, 400, "input 'token_type_ids' of model 'minilm' has shape "
     "\\[batch, seq\\], got \\[1, 3, 1\\]"),
    ("minilm:run", npz_bytes({"input_ids": np.ones((1, 3), np.int64),
                              "attention_mask": np.ones((1, 3), np.int64),
                              "token_type_ids": np.ones((2, 3), np.int64)}),
     NPZ, 400, "token_type_ids"),
    ("minilm:run", b"x" * (MAX_BODY + 1), NPY, 413, "larger than this "
     "server's limit"),
    ("minilm:run", b"{", "application/json", 400, "not JSON"),
    ("gpt9:run", b"{}", "application/json", 404, "no model 'gpt9'"),
    ("demo:generate", json.dumps({"prompt": "a €"}).encode(),
     "application/json", 400, "outside the model's vocabulary"),
    ("minilm:generate", json.dumps({"prompt": "a"}).encode(),
     "application/json", 400, "no vocabulary"),
    ("minilm/sessions", b"", "application/json", 400, "no state pairs"),
])
def test_bad_requests_get_a_4xx_and_the_server_keeps_serving(
        server, minilm, path, body, content_type, status, message):
    got, _, answer = call(f"{server}/v1/models/{path}", "POST", body,
                          content_type)
    assert got == status, answer
    assert re.search(message, json.loads(answer)["error"]), answer
    inputs = minilm_inputs(np.random.default_rng(3), 1, 3)
    assert run_json(server, "minilm", inputs)[0] == 200


def create_session(server, state=None):
    status, _, body = call(f"{server}/v1/models/demo/sessions", "POST",
                           b"" if state is None else npz_bytes(state), NPZ)
    assert status == 201, body
    return json.loads(body)["session"]


def step(server, session, tokens):
    return call(f"{server}/v1/models/demo/sessions/{session}:step", "POST",
                json.dumps({"inputs": {"tokens": [tokens]}}).encode())


def snapshot(server, session):
    status, _, body = call(
        f"{server}/v1/models/demo/sessions/{session}/snapshot")
    assert status == 200, body
    return load_npz(body)


def close(server, session):
    call(f"{server}/v1/models/demo/sessions/{session}", "DELETE")


def test_sessions_step_as_a_local_stream_and_restore_from_snapshots(server):
    local = seqrt.Stream(seqrt.Session(str(DEMO)))
    session = create_session(server)
    for tokens in ([5, 6, 7, 8], [9], [10, 11]):
        status, _, body = step(server, session, tokens)
        assert status == 200, body
        expected, = local.step({"tokens": np.array([tokens], np.int64)})
        np.testing.assert_allclose(outputs_of(body)["logits"], expected,
                                   rtol=1e-5, atol=1e-5)
    copy = create_session(server, snapshot(server, session))
    a, b = step(server, session, [12]), step(server, copy, [12])
    # Equal to rounding: either replica may run a step on fewer threads.
    np.testing.assert_allclose(outputs_of(a[2])["logits"],
                               outputs_of(b[2])["logits"], rtol=1e-5, atol=1e-5)
    close(server, session)
    close(server, copy)
    status, _, body = step(server, session, [1])
    assert status == 404 and "closed, or idle" in json.loads(body)["error"]


def test_session_limit(server):
    made, refused = [], None
    for _ in range(2 * MAX_SESSIONS + 1):  # 2 replicas: one must refuse
        status, _, body = call(f"{server}/v1/models/demo/sessions", "POST")
        if status != 201:
            refused = (status, json.loads(body)["error"])
            break
        made.append(json.loads(body)["session"])
    for session in made:
        close(server, session)
    assert refused is not None and refused[0] == 429
    assert f"limit of {MAX_SESSIONS} sessions" in refused[1]


def test_generate_streams_the_greedy_text(server):
    status, headers, body = call(f"{server}/v1/models/demo:generate", "POST",
                                 json.dumps({"prompt": "It is a truth",
                                             "max_tokens": 24}).encode())
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = [line[len("data: "):] for line in body.decode().split("\n")
              if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(event)["token"] for event in events[:-1])
    session = seqrt.Session(str(DEMO))
    vocabulary = json.loads(session.metadata["seqrt.vocab"])
    stream = seqrt.Stream(session)
    tokens = np.array([[vocabulary.index(c) for c in "It is a truth"]])
    logits, = stream.prefill({"tokens": tokens})
    expected = ""
    for _ in range(24):
        token = int(np.argmax(logits[0, -1]))
        expected += vocabulary[token]
        logits, = stream.step({"tokens": np.array([[token]])})
    assert text == expected


def test_killing_a_replica_under_load(server, minilm):
    """Stateless runs go on; sessions on the killed replica answer 410 and
    come back from their last snapshot; sessions elsewhere go on."""
    sessions = {}
    for _ in range(20):  # one session on each demo replica
        session = create_session(server)
        if sessions.setdefault(session.split(".")[0], session) != session:
            close(server, session)
        if len(sessions) == 2:
            break
    assert len(sessions) == 2, "every session landed on one replica"
    (doomed_replica, doomed), (_, kept) = sessions.items()
    assert step(server, doomed, [3, 4])[0] == 200
    saved = snapshot(server, doomed)

    rng = np.random.default_rng(4)
    requests = [minilm_inputs(rng, 1, 6) for _ in range(48)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = [pool.submit(run_json, server, "minilm", r)
                   for r in requests]
        time.sleep(0.2)
        kill_replica("model-minilm", next(iter(replica_actors(
            "model-minilm"))))
        kill_replica("model-demo", doomed_replica)
        for inputs, answer in zip(requests, answers):
            status, _, body = answer.result()
            assert status == 200, body
            expected, = minilm.run(["last_hidden_state"], inputs)
            np.testing.assert_allclose(outputs_of(body)["last_hidden_state"],
                                       expected, rtol=1e-4, atol=1e-5)

    status, _, body = step(server, doomed, [5])
    assert status == 410, body
    assert "create a session from your last snapshot" in \
        json.loads(body)["error"]
    assert step(server, kept, [5])[0] == 200
    restored = create_session(server, saved)
    status, _, body = step(server, restored, [5])
    assert status == 200, body
    local = seqrt.Stream(seqrt.Session(str(DEMO)))
    local.prefill({"tokens": np.array([[3, 4]])})
    expected, = local.step({"tokens": np.array([[5]])})
    np.testing.assert_allclose(outputs_of(body)["logits"], expected,
                               rtol=1e-5, atol=1e-5)
