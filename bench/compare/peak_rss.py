"""python peak_rss.py OUT_FILE COMMAND...: runs COMMAND with this process's
stdin/stdout/stderr, writes its peak RSS in KiB to OUT_FILE and exits with
its exit status (like `/usr/bin/time -f %M -o OUT_FILE`, which Debian only
has with the `time` package).

A child's max RSS includes what it had before exec, the parent's memory for
a forked child: the benchmark's own process holds torch, so it starts
commands through this small process, whose children start from its ~11 MiB
(a smaller peak reads as that).
Imports nothing beyond the standard library."""

import os
import subprocess
import sys


def main() -> int:
    out_file, command = sys.argv[1], sys.argv[2:]
    proc = subprocess.Popen(command)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    with open(out_file, "w") as out:
        out.write(f"{usage.ru_maxrss}\n")  # KiB on Linux
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


if __name__ == "__main__":
    sys.exit(main())
