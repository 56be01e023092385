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
SCRIPTS = ("build_zoo.py", "zoo_exports.py", "zoo_wheels.py")


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
    ~/.cache/seqrt (the zoo's files are built, never committed)."""
    if os.environ.get("SEQRT_ZOO_DIR"):
        path = pathlib.Path(os.environ["SEQRT_ZOO_DIR"])
    else:
        path = pathlib.Path.home() / ".cache" / "seqrt" / f"zoo-{zoo_key()}"
    if not (path / "manifest.json").exists():
        subprocess.run([sys.executable, str(HERE / "build_zoo.py"), str(path)],
                       check=True)
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
