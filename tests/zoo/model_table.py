"""Prints the README's zoo table (Markdown) from the results the zoo test
wrote: python tests/zoo/model_table.py [build/zoo-results.json]"""

import json
import pathlib
import sys

import zoo_check

REPO = pathlib.Path(__file__).resolve().parents[2]


def main() -> int:
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else (
        REPO / "build" / "zoo-results.json")
    results = json.loads(path.read_text())
    configs = list(zoo_check.CONFIGS)
    print("| model | source | " + " | ".join(configs) + " |")
    print("|---|---|" + "---|" * len(configs))
    notes = {}  # reason -> its footnote number
    for model, row in sorted(results.items()):
        cells = []
        for config in configs:
            status = row.get(config, "not run")
            if status == "ok":
                cells.append("✓")
            else:
                number = notes.setdefault(status, len(notes) + 1)
                cells.append(f"✗ [{number}]")
        print(f"| {model} | {row['source']} | " + " | ".join(cells) + " |")
    for note, number in notes.items():
        print(f"\n[{number}] {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
