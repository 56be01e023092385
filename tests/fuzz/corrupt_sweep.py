#!/usr/bin/env python3
"""Corrupt-input sweep: damaged model files through the `seqrt` CLI.

For every test model (the sample models the sample programs write, the demo
model, a selection of the ONNX node tests) this writes variants truncated at
many points and with seeded random bit flips, runs `seqrt inspect` and
`seqrt run` (with inputs generated from the intact model's inputs) on each
under a timeout, and classifies every run:

  clean error  non-zero exit and exactly one line on stderr, "seqrt: error: ..."
  valid        exit 0
  crash        killed by a signal
  hang         ran past the timeout
  sanitizer    stderr holds a sanitizer report ("Sanitizer")
  unclear      non-zero exit with anything but one error line on stderr,
               or a control character in it

It prints the counts and exits 1 on any crash, hang, sanitizer report or
unclear error, listing each (model variant, command, stderr excerpt) so a
finding can be reproduced by hand. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import os
import random
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

# The sizes given to symbolic dims of generated inputs.
SYMBOL_SIZE = 2
# npy descr and bytes per element of each seqrt dtype name (`seqrt inspect`).
NPY_DTYPES = {
    "f32": ("<f4", 4), "f16": ("<f2", 2), "f64": ("<f8", 8),
    "i8": ("|i1", 1), "u8": ("|u1", 1), "i32": ("<i4", 4),
    "i64": ("<i8", 8), "bool": ("|b1", 1),
}
SEQRT_MAGIC = b"SEQRT\r\n\x1a"


def write_npy(path, descr, size, dims):
    """A C-order .npy file of `dims` filled with ones (1.0, 1, True)."""
    count = 1
    for dim in dims:
        count *= dim
    if descr[1] == "f":
        one = {2: struct.pack("<e", 1.0), 4: struct.pack("<f", 1.0),
               8: struct.pack("<d", 1.0)}[size]
    else:
        one = (1).to_bytes(size, "little")
    shape = "(" + "".join(f"{d}," for d in dims) + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1") + one * count)


def parse_inspect(text):
    """(inputs, state inputs) from `seqrt inspect`: [(name, dtype, dims)]."""
    inputs, states, section = [], set(), None
    for line in text.splitlines():
        if not line.startswith("  "):
            section = line.split(" ")[0]
            continue
        entry = line.strip()
        if section == "inputs":
            name, _, rest = entry.rpartition(": ")
            dtype, _, shape = rest.partition(" ")
            inputs.append((name, dtype, shape))
        elif section == "state":
            states.add(entry.split(" -> ")[0])
    return inputs, states


def make_inputs(cli, model, folder, timeout):
    """--input flags for `seqrt run` on `model`; None when not runnable."""
    result = subprocess.run([cli, "inspect", str(model)], capture_output=True,
                            text=True, timeout=timeout)
    if result.returncode != 0:
        return None
    inputs, states = parse_inspect(result.stdout)
    flags = []
    for index, (name, dtype, shape) in enumerate(inputs):
        if name in states:
            continue  # state starts from its initial value
        if dtype not in NPY_DTYPES or not shape.startswith("("):
            return None  # strings, unknown ranks: inspect only
        dims = [int(d) if d.isdigit() else SYMBOL_SIZE
                for d in shape.strip("()").split(",") if d]
        path = folder / f"input_{index}.npy"
        write_npy(path, *NPY_DTYPES[dtype], dims)
        flags += ["--input", f"{name}={path}"]
    return flags


def metadata_range(data):
    """The byte range to flip bits in: a .seqrt file's header and FlatBuffer
    (its weights only change numbers), or the whole of any other file."""
    if data.startswith(SEQRT_MAGIC) and len(data) >= 32:
        offset, size = struct.unpack_from("<QQ", data, 16)
        end = min(len(data), offset + size)
        if offset < end:
            return end
    return len(data)


def variants(data, truncations, flips, rng):
    """(label, bytes) pairs: truncations at fixed and random points, then
    copies with random bit flips (mostly one: more flips are caught by the
    first check they meet and test little more)."""
    size = len(data)
    points = {0, 1, 7, 8, 16, 63, 64, 65, size // 2, size - 1}
    while len(points) < truncations + 10 and len(points) < size:
        points.add(rng.randrange(size))
    for point in sorted(p for p in points if 0 <= p < size):
        yield f"truncated at {point}", data[:point]
    end = metadata_range(data)
    for index in range(flips):
        damaged = bytearray(data)
        bits = []
        for _ in range(rng.choice((1, 1, 1, 2, 4))):
            bit = rng.randrange(end * 8)
            damaged[bit // 8] ^= 1 << (bit % 8)
            bits.append(bit)
        yield f"flip {index} (bits {bits})", bytes(damaged)


def classify(result):
    """The class of one finished run (a CompletedProcess)."""
    stderr = result.stderr
    if "Sanitizer" in stderr:
        return "sanitizer"
    if result.returncode < 0:
        return "crash"
    if result.returncode == 0:
        return "valid"
    # Lines as a script reading stderr sees them: split at '\n' only.
    lines = stderr.rstrip("\n").split("\n")
    controls = any(ord(c) < 0x20 or ord(c) == 0x7f for c in lines[0])
    if (len(lines) == 1 and lines[0].startswith("seqrt: error: ")
            and not controls):
        return "clean"
    return "unclear"


def run_one(command, timeout):
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    return classify(result), result.stderr


def collect_models(args, work):
    """Every intact model to damage, as paths."""
    models = []
    for program in args.make_model:
        folder = work / "models" / Path(program).name
        subprocess.run([program, str(folder)], check=True,
                       stdout=subprocess.DEVNULL)
        models += sorted(folder.rglob("*.seqrt"))
    models += [Path(m) for m in args.model]
    # The node tests' folder as tests/onnx_node finds it first.
    node_dir = Path(os.environ.get("SEQRT_ONNX_NODE_TESTS",
                                   args.onnx_node_tests))
    if node_dir.is_dir():
        listed = Path(__file__).with_name("node_tests.txt").read_text()
        names = [n for n in listed.split() if n.startswith("test_")]
        names = random.Random(args.seed).sample(
            names, min(args.node_tests, len(names)))
        models += [node_dir / n / "model.onnx" for n in sorted(names)
                   if (node_dir / n / "model.onnx").is_file()]
    return models


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seqrt", required=True, help="the seqrt CLI")
    parser.add_argument("--make-model", action="append", default=[],
                        help="a sample program: PROGRAM DIR writes models")
    parser.add_argument("--model", action="append", default=[],
                        help="a model file to damage")
    parser.add_argument("--onnx-node-tests", default="",
                        help="the ONNX node tests' folder (<test>/model."
                        "onnx); $SEQRT_ONNX_NODE_TESTS overrides it")
    parser.add_argument("--node-tests", type=int, default=16,
                        help="how many of node_tests.txt to sample")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--truncations", type=int, default=16)
    parser.add_argument("--flips", type=int, default=24)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds a run may take before it is a hang")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()

    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    start = time.monotonic()
    rng = random.Random(args.seed)
    commands = []  # (label, command)
    files = 0
    for model_index, model in enumerate(collect_models(args, work)):
        folder = work / f"m{model_index}"
        folder.mkdir()
        inputs = make_inputs(args.seqrt, model, folder, args.timeout)
        data = model.read_bytes()
        for index, (label, damaged) in enumerate(
                variants(data, args.truncations, args.flips, rng)):
            path = folder / f"v{index}{model.suffix}"
            path.write_bytes(damaged)
            files += 1
            name = f"{model} {label} ({path})"
            commands.append((name, [args.seqrt, "inspect", str(path)]))
            if inputs is not None:
                commands.append((name, [args.seqrt, "run", str(path),
                                        "--backend", "reference"] + inputs))

    counts = {k: 0 for k in
              ("clean", "valid", "crash", "hang", "sanitizer", "unclear")}
    findings = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_one, command, args.timeout): (name, command)
                   for name, command in commands}
        for future in concurrent.futures.as_completed(futures):
            kind, stderr = future.result()
            counts[kind] += 1
            if kind not in ("clean", "valid"):
                name, command = futures[future]
                findings.append(f"{kind}: {name}\n  $ {' '.join(command)}\n"
                                f"  {stderr.strip()[-1500:]}")

    for finding in sorted(findings):
        print(finding)
    print(f"corrupt-input sweep: {files} files tried, {len(commands)} runs: "
          f"{counts['clean']} clean errors, {counts['valid']} valid, "
          f"{counts['crash']} crashes, {counts['hang']} hangs, "
          f"{counts['sanitizer']} sanitizer reports, "
          f"{counts['unclear']} unclear errors "
          f"({time.monotonic() - start:.0f} s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
