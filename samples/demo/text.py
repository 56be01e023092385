"""The training text: Jane Austen's six novels as Debian's r-cran-janeaustenr
package ships them (public domain texts; the package is MIT licensed).

The package keeps each novel as an R character vector (one element per
line) in `data/Rdata.rdb`, R's lazy-load database: zlib blobs, each a
4-byte big-endian length then the compressed serialisation. This module
reads that format directly, so neither R nor an R package has to be
installed: `apt-get download` fetches the .deb and `dpkg-deb -x` unpacks it.
"""

import pathlib
import struct
import subprocess
import zlib
from typing import List

PACKAGE = "r-cran-janeaustenr"
RDB = "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"
STRSXP, CHARSXP = 16, 9


def fetch_deb(cache: pathlib.Path, package: str) -> pathlib.Path:
    """The package's .deb in `cache`, downloaded with apt-get if absent
    (no install: nothing on the system changes)."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(package + "_*.deb"))
    if not found:
        subprocess.run(["apt-get", "download", package], cwd=cache, check=True)
        found = sorted(cache.glob(package + "_*.deb"))
    if not found:
        raise FileNotFoundError(f"apt-get download {package} left no .deb in {cache}")
    return found[-1]


def unpack_deb(deb: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return into


def _character_vector(blob: bytes) -> List[str]:
    """One XDR serialisation ('X\\n', version 3) of a character vector."""
    if blob[:2] != b"X\n":
        raise ValueError("Rdata.rdb: expected an XDR serialisation ('X\\n')")
    p = 2 + 12  # format version, R version, oldest R that reads it
    (encoding_length,) = struct.unpack(">i", blob[p:p + 4])
    p += 4 + encoding_length
    flags, length = struct.unpack(">ii", blob[p:p + 8])
    p += 8
    if flags & 0xFF != STRSXP:
        raise ValueError(f"Rdata.rdb: expected a character vector, got type {flags & 0xFF}")
    lines = []
    for _ in range(length):
        flags, size = struct.unpack(">ii", blob[p:p + 8])
        p += 8
        if flags & 0xFF != CHARSXP:
            raise ValueError(f"Rdata.rdb: expected a string, got type {flags & 0xFF}")
        if size < 0:  # NA
            lines.append("")
            continue
        lines.append(blob[p:p + size].decode("utf-8"))
        p += size
    return lines


def read_rdb(data: bytes) -> List[List[str]]:
    """The character vectors stored in an .rdb file's bytes, in order."""
    vectors, offset = [], 0
    while offset < len(data):
        inflater = zlib.decompressobj()
        blob = inflater.decompress(data[offset + 4:])
        if not inflater.eof:
            raise ValueError(f"Rdata.rdb: truncated zlib stream at byte {offset + 4}")
        offset = len(data) - len(inflater.unused_data)
        vectors.append(_character_vector(blob))
    return vectors


def read_novels(deb: pathlib.Path, workdir: pathlib.Path) -> List[str]:
    """The six novels (one string each, lines joined by newlines)."""
    data = (unpack_deb(deb, workdir) / RDB).read_bytes()
    return ["\n".join(lines) for lines in read_rdb(data)]


def load_text(cache: pathlib.Path) -> str:
    """The novels joined by blank lines, keeping printable ASCII and newlines
    (this drops one '£')."""
    deb = fetch_deb(cache, PACKAGE)
    novels = read_novels(deb, cache / "unpacked")
    text = "\n\n\n".join(novels)
    return "".join(c for c in text if c == "\n" or " " <= c <= "~")
