"""Smoke test of bench/compare_onnxruntime.py: the quick BERT through seqrt's
CLI (SEQRT_CLI, as the other tests) and onnxruntime gives a table row whose
ratio is a number and whose outputs agree."""

import re
import subprocess
import sys

from conftest import REPO, seqrt_cli

SCRIPT = REPO / "bench/compare_onnxruntime.py"


def table_rows(text: str, header_start: str):
    """The rows of the markdown table whose header starts with header_start,
    as lists of cells keyed by the header's names."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    names = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(names, (c.strip() for c in line.strip("|").split("|")))))
    return rows


def test_quick_bert_row_has_numeric_ratio(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--models", "bert",
         "--cli", seqrt_cli(), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = table_rows(proc.stdout, "| model | shape / phase | seqrt ms")
    assert [r["model"] for r in rows] == ["bert"], proc.stdout
    row = rows[0]
    ratio = float(row["ratio ORT/seqrt"])
    assert ratio > 0
    assert float(row["seqrt ms"]) > 0 and float(row["ORT ms"]) > 0
    assert float(row["seqrt peak RSS MiB"]) > 0
    # Same file, same weights: the engines agree to fp32 rounding.
    assert float(row["max rel diff"]) < 1e-4, row
    loads = table_rows(proc.stdout, "| model | shape / phase | .onnx import ms")
    assert re.fullmatch(r"[\d.]+", loads[0][".seqrt load ms"]), loads
    assert re.fullmatch(r"\d+ / \d+ \([\d.]+ %\)",
                        loads[0]["arena peak / naive KiB"]), loads


def test_unknown_model_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--models", "bert,nosuch",
         "--cli", seqrt_cli(), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown ['nosuch']" in proc.stderr
