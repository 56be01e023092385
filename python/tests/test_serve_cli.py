"""`seqrt serve` as a user types it: the C++ CLI forwards to the Python
package, which starts a local Ray instance and serves until interrupted."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("ray.serve", reason="Ray Serve is not installed")

REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("SEQRT_CLI", str(REPO / "build/dev/tools/seqrt"))
DEMO = REPO / "samples/demo/austen.seqrt"


def cli(*args, python=sys.executable, **kwargs):
    env = dict(os.environ, SEQRT_PYTHON=python)
    return subprocess.Popen([CLI, "serve", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **kwargs)


def test_help_and_a_python_that_is_not_there():
    out, _ = cli("--help").communicate(timeout=60)
    assert "usage: seqrt serve" in out and "--replicas" in out
    process = cli("model.onnx", python="/nonexistent/python3")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "seqrt serve' runs the Python package seqrt.serve, but " \
        "'/nonexistent/python3' could not be started" in out
    process = cli(str(REPO / "no_such_model.onnx"))
    out, _ = process.communicate(timeout=60)
    assert process.returncode != 0 and "no model file" in out


def test_serves_until_interrupted():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = cli(f"demo={DEMO}", "--port", str(port), "--num-cpus", "0",
                  start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read()
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/v1/models", timeout=5) as r:
                    models = json.loads(r.read())["models"]
                break
            except OSError:
                assert time.monotonic() < deadline, "no answer in 120 s"
                time.sleep(1)
        assert [m["name"] for m in models] == ["demo"]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert process.returncode == 0
