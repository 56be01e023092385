"""The zoo's fixtures: the built zoo (cached between runs) and the results
table that test_zoo.py fills and writes at the end of the session."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
# What the zoo's files are made from: the builders, and the pinned packages
# of the torch 2.x venv (torch 1.13 and transformers are hashed by version).
SCRIPTS = ("build_zoo.py", "zoo_exports.py", "zoo_wheels.py", "zoo_files.py",
           "zoo_torch2.py", "zoo_dynamo.py", "requirements-torch2.txt")


def zoo_key() -> str:
    """Changes whenever the scripts or the exporting packages change."""
    import torch
    import transformers
    digest = hashlib.sha256()
    for name in SCRIPTS:
        digest.update((HERE / name).read_bytes())
    digest.update(f"{torch.__version__} {transformers.__version__}".encode())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def zoo() -> pathlib.Path:
    """SEQRT_ZOO_DIR when set, else a cache folder keyed by zoo_key() under
    ~/.cache/seqrt (the zoo's files are built, never committed). Only a
    build makes the torch 2.x venv, so a cached zoo needs no network; a
    build that cannot make it fails every test, saying why."""
    if os.environ.get("SEQRT_ZOO_DIR"):
        path = pathlib.Path(os.environ["SEQRT_ZOO_DIR"])
    else:
        path = pathlib.Path.home() / ".cache" / "seqrt" / f"zoo-{zoo_key()}"
    if not (path / "manifest.json").exists():
        built = subprocess.run([sys.executable, str(HERE / "build_zoo.py"),
                                str(path)])
        if built.returncode != 0:
            pytest.fail(f"building the zoo into {path} failed (exit "
                        f"{built.returncode}): see the build's output above",
                        pytrace=False)
    return path


@pytest.fixture(scope="session")
def cli() -> str:
    return os.environ.get("SEQRT_CLI", str(REPO / "build/dev/tools/seqrt"))


RESULTS = {}


@pytest.fixture(scope="session")
def results():
    return RESULTS


def pytest_sessionfinish(session, exitstatus):
    if not RESULTS:
        return
    out = pathlib.Path(os.environ.get(
        "SEQRT_ZOO_RESULTS", REPO / "build" / "zoo-results.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(RESULTS, indent=1, sort_keys=True))
