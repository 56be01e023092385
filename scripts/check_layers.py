#!/usr/bin/env python3
"""Checks that no library source includes a layer above its own.

The layers, bottom to top (README.md "Folder map"):
    graph -> ops -> compiler -> importers | backends -> runtime -> tools | python
importers and backends sit side by side: neither includes the other.
A file may include its own layer and the layers below it. Tests and test
helpers (*_test.cc, *_test_util.h, *_testing.h, files under a testing/
folder) exercise a layer through the ones above it and are not checked;
nor are the top-level consumers (tests/, testing/, bench/, samples/).

Usage: check_layers.py [ROOT]   (exit 1 listing every violation)
       check_layers.py --self-test (the check on a made-up tree)
"""
import os
import re
import sys
import tempfile

RANKS = {
    "graph": 0,
    "ops": 1,
    "compiler": 2,
    "importers": 3,
    "backends": 3,
    "runtime": 4,
    "tools": 5,
    "python": 5,
}
# Generated or public headers any layer may read.
SHARED = {"schema", "include", "seqrt"}
SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")
TEST_SUFFIXES = ("_test.cc", "_test_util.h", "_testing.h", "test_util.h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z_]+)/')


def is_test(relpath):
    return relpath.endswith(TEST_SUFFIXES) or "testing" in relpath.split("/")


def violations(root):
    found = []
    for layer, rank in RANKS.items():
        top = os.path.join(root, layer)
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in ("build", "__pycache__")]
            for name in files:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                if not name.endswith(SOURCE_SUFFIXES) or is_test(rel):
                    continue
                with open(path, errors="replace") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = match.group(1)
                        if target in SHARED or target == layer:
                            continue
                        if not os.path.isdir(os.path.join(root, target)):
                            continue  # a dependency's header, e.g. onnx/
                        if target not in RANKS:
                            found.append(f"{rel}:{number}: includes '{target}/', "
                                         "which is not a library layer")
                        elif RANKS[target] >= rank:
                            found.append(f"{rel}:{number}: layer '{layer}' "
                                         f"includes '{target}/', which is not "
                                         "below it")
    return found


def self_test():
    """A tree with one include going up and the allowed kinds beside it."""
    with tempfile.TemporaryDirectory() as root:
        files = {
            "graph/bad.h": '#include "ops/registry.h"\n',
            "graph/ok.h": '#include "graph/shape.h"\n#include "onnx/onnx.h"\n',
            "ops/ok_test.cc": '#include "runtime/session.h"\n',
            "backends/peer.h": '#include "importers/onnx/importer.h"\n',
            "runtime/ok.cc": '#include "backends/backend.h"\n',
            "importers/ok.h": '#include "compiler/infer/infer_graph.h"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as out:
                out.write(text)
        found = sorted(violations(root))
    expected = [
        "backends/peer.h:1: layer 'backends' includes 'importers/', "
        "which is not below it",
        "graph/bad.h:1: layer 'graph' includes 'ops/', which is not below it",
    ]
    if found != expected:
        print("self-test failed: found", found)
        return 1
    print("self-test ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) break the layering "
              "graph -> ops -> compiler -> importers|backends -> runtime -> tools")
        return 1
    print("layering ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
