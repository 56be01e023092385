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


def run_quick(workdir, models: str, timeout: int):
    """The script on the --quick sizes of `models`: the process (which must
    succeed) and the rows of its speed table."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--models", models, "--cli",
         seqrt_cli(), "--workdir", str(workdir)],
        capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, table_rows(proc.stdout, "| model | shape / phase | seqrt ms")


def test_quick_hugging_face_rows_agree(tmp_path):
    """The transformers exports (GPT-2 and Llama prefill and decode with
    past_key_values, Llama with attention_mask; BERT with its three inputs)
    run in both engines and agree."""
    proc, rows = run_quick(tmp_path, "hf_gpt2,hf_llama,hf_bert", timeout=300)
    assert [(r["model"], r["shape / phase"]) for r in rows] == [
        ("hf_gpt2", "prefill 16"), ("hf_gpt2", "decode step, past 8"),
        ("hf_llama", "prefill 16"), ("hf_llama", "decode step, past 8"),
        ("hf_bert", "encoder seq 32")], proc.stdout
    for row in rows:
        assert float(row["max rel diff"]) < 1e-4, row
    inputs = sorted(p.stem for p in tmp_path.glob("hf_llama_*_decode8/inputs/*.npy"))
    assert inputs[:2] == ["attention_mask", "input_ids"], inputs
    assert "past_key_values.1.value" in inputs, inputs
    loads = table_rows(proc.stdout, "| model | shape / phase | .onnx import ms")
    for row in loads:  # --plan got the symbolic dims bound
        assert re.fullmatch(r"\d+ / \d+ \([\d.]+ %\)",
                            row["arena peak / naive KiB"]), row


def test_quick_scan_rows_agree(tmp_path):
    """The recurrences written as plain-ONNX Scans (scan_models.py) run in
    both engines and agree."""
    proc, rows = run_quick(tmp_path,
                           "scan_selective,scan_retention,scan_lstm,scan_gru",
                           timeout=120)
    assert [r["model"] for r in rows] == [
        "scan_selective", "scan_retention", "scan_lstm", "scan_gru"], proc.stdout
    for row in rows:
        assert float(row["ratio ORT/seqrt"]) > 0, row
        assert float(row["max rel diff"]) < 1e-4, row


def test_failing_seqrt_fails_its_row_only(tmp_path):
    """A CLI that refuses every file: each row shows 'failed' for seqrt and
    its message, onnxruntime still runs, the script exits 1."""
    cli = tmp_path / "refusing_seqrt"
    cli.write_text("#!/bin/sh\necho 'seqrt: error: no kernel for op X' >&2\nexit 1\n")
    cli.chmod(0o755)
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--models", "bert",
         "--cli", str(cli), "--workdir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = table_rows(proc.stdout, "| model | shape / phase | seqrt ms")[0]
    assert row["seqrt ms"] == "failed" and float(row["ORT ms"]) > 0, row
    assert ("error, bert encoder seq 32: seqrt: seqrt convert model.onnx failed "
            "(exit 1): seqrt: error: no kernel for op X") in proc.stdout, proc.stdout


def test_unknown_model_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--models", "bert,nosuch",
         "--cli", seqrt_cli(), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown ['nosuch']" in proc.stderr
