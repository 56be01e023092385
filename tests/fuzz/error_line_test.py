#!/usr/bin/env python3
"""Regression test from the corrupt-input sweep: a model whose names hold
control characters (a bit flip turned a letter into a vertical tab or a NUL)
still gets exactly one whole error line, with no control character in it.

  error_line_test.py SEQRT_CLI WORK_DIR
"""

import subprocess
import sys
from pathlib import Path


def field(number, payload):
    """A length-delimited protobuf field (payloads here are < 128 bytes)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def varint_field(number, value):
    return bytes([number << 3, value])


def model_with_untyped_input(name):
    """A ModelProto whose one graph input `name` has no type: the importer
    refuses it with a message that quotes the name."""
    value_info = field(1, name)
    graph = field(2, b"g") + field(11, value_info)
    opset = varint_field(2, 13)
    return varint_field(1, 8) + field(7, graph) + field(8, opset)


def main():
    cli, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    failures = []
    names = (b"a\x0bb", b"a\x0cb", b"a\x1b[31mb", b"a\x1cb\x7f", b"a\nb",
             b"a\x00b")
    for name in names:
        model = work / "control_chars.onnx"
        model.write_bytes(model_with_untyped_input(name))
        result = subprocess.run([cli, "inspect", str(model)],
                                capture_output=True, timeout=60)
        err = result.stderr
        controls = [c for c in err[:-1] if c < 0x20 or c == 0x7f]
        # The whole message: a NUL in a name must not cut it short.
        if (result.returncode != 1 or not err.startswith(b"seqrt: error: ")
                or not err.endswith(b" has no element type\n") or controls):
            failures.append(f"name {name!r}: exit {result.returncode}, "
                            f"stderr {err!r}")
    for failure in failures:
        print(failure)
    print(f"error_line_test: {len(names) - len(failures)} of {len(names)} "
          "names give one clean line")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
