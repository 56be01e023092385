"""Session(path, mmap=False) reads a .seqrt file into memory: the file may
then be truncated or removed and the session still runs. (With the default
mmap=True the weights are used in place, and the file must stay as it is.)"""

import pathlib
import shutil

import numpy as np
import pytest

import seqrt

DEMO = pathlib.Path(__file__).resolve().parents[2] / "samples" / "demo" / "austen.seqrt"
TOKENS = np.array([[37, 58, 58, 66, 1]], dtype=np.int64)


def test_a_session_without_mmap_survives_truncating_the_file(tmp_path):
    copy = tmp_path / "austen.seqrt"
    shutil.copyfile(DEMO, copy)
    session = seqrt.Session(copy, backend="cpu", mmap=False)
    with open(copy, "wb"):
        pass  # truncated to 0 bytes: a mapped session would die of SIGBUS
    copy.unlink()
    logits, = session.run(["logits"], {"tokens": TOKENS})
    expected, = seqrt.Session(DEMO, backend="cpu").run(["logits"], {"tokens": TOKENS})
    # Equal to rounding: a run may go serial on a busy machine (the CPU
    # backend's thread governor), which changes oneDNN's summation order.
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_mmap_false_still_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.seqrt"
    bad.write_bytes(DEMO.read_bytes()[:100])
    with pytest.raises(seqrt.InvalidModelError, match="bad.seqrt"):
        seqrt.Session(bad, mmap=False)
