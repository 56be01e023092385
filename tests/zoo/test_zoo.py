"""Every zoo model on every backend configuration against onnxruntime.

A (model, configuration) pair either matches onnxruntime, or is listed in
expected_failures.txt with its reason; a listed pair that now matches fails
too, so the list stays true. Each outcome goes to the results table
(build/zoo-results.json) that model_table.py turns into the README's table.
"""

import json
import pathlib

import pytest

import zoo_check
import zoo_torch2

HERE = pathlib.Path(__file__).resolve().parent
MODELS = sorted(list(__import__("zoo_exports").BUILDERS) +
                list(__import__("zoo_wheels").builders()) +
                list(zoo_torch2.MODELS))


def expected_failures():
    listed = {}
    for line in (HERE / "expected_failures.txt").read_text().splitlines():
        entry, _, reason = line.partition("#")
        if not entry.strip():
            continue
        model, config = entry.split(None, 1)
        if not reason.strip():
            raise ValueError(f"expected_failures.txt: '{line}' has no reason")
        listed[(model, config.strip())] = reason.strip()
    return listed


EXPECTED = expected_failures()


@pytest.mark.parametrize("config", list(zoo_check.CONFIGS))
@pytest.mark.parametrize("model", MODELS)
def test_matches_onnxruntime(zoo, cli, results, model, config):
    problem = zoo_check.check(cli, zoo, model, config)
    listed = EXPECTED.get((model, config))
    results.setdefault(model, {
        "source": json.loads((zoo / "manifest.json").read_text())[model]["source"]
    })[config] = "ok" if problem is None else (listed or problem)
    if listed is not None:
        assert problem is not None, (
            f"{model} [{config}] now matches onnxruntime: remove it from "
            "tests/zoo/expected_failures.txt")
        return
    assert problem is None, f"{model} [{config}]: {problem}"
