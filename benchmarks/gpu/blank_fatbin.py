"""Blank, in a shared library, the CUDA device code of every architecture but one, so that it compresses to what
one GPU needs; the library's layout (every offset, every size) is unchanged.  Not a test, never run by CI.

    python3 benchmarks/gpu/blank_fatbin.py IN.so OUT.so [--keep 90]

Why: Transformer Engine's core library (``libtransformer_engine.so`` of the ``transformer_engine_cu13`` wheel) is
468 MB, 445 MB of it the ``.nv_fatbin`` section: each kernel built for sm_75 to sm_120, as machine code (ELF) and
as PTX.  The lent machine takes 64 MiB a call.  The CUDA runtime loads, for an sm_90 GPU, the sm_90 ELF of each
fat binary (or, lacking one, JITs the best PTX); the other entries are never read.  Overwriting their payloads with
zeros keeps every header and offset, and xz turns the zeros into nothing: 20 MB instead of 126.

How: the section holds fat binaries one after another, each a 16-byte header (magic ``0xBA55ED50``, version,
header size, size of its entries) and entries of a header (kind: 1 PTX, 2 ELF; header size; padded payload size;
at byte 28 the architecture, 90 for sm_90) and the payload.  The script refuses a library in which some fat
binary lacks the kept architecture's ELF, since the runtime would then JIT a PTX entry that may have been blanked.
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys

MAGIC = 0xBA55ED50
ELF = 2


def fatbin_section(path: str) -> tuple[int, int]:
    """File offset and size of ``.nv_fatbin`` (readelf's section table)."""
    table = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout
    for line in table.splitlines():
        if " .nv_fatbin " in f"{line} ":
            fields = line.split("]", 1)[1].split()
            return int(fields[3], 16), int(fields[4], 16)
    raise SystemExit(f"{path}: no .nv_fatbin section")


def entries(data: bytes, offset: int, size: int) -> list[list[tuple[int, int, int, int]]]:
    """Each fat binary's entries as (kind, architecture, payload offset in the file, payload size)."""
    binaries, pos, end_of_section = [], offset, offset + size
    while pos + 16 <= end_of_section:
        magic, _version, header, length = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:  # padding between fat binaries
            pos += 8
            continue
        entry, end, found = pos + header, pos + header + length, []
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            found.append((kind, arch, entry + entry_header, payload))
            entry += entry_header + payload
        binaries.append(found)
        pos = end
    return binaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--keep", type=int, default=90, help="architecture kept, as the fat binary writes it (90)")
    args = parser.parse_args(argv)
    data = bytearray(open(args.source, "rb").read())
    binaries = entries(bytes(data), *fatbin_section(args.source))
    lacking = sum(1 for found in binaries if not any(k == ELF and a == args.keep for k, a, _, _ in found))
    if not binaries or lacking:
        print(f"{args.source}: {lacking} of {len(binaries)} fat binaries have no sm_{args.keep} ELF", file=sys.stderr)
        return 2
    blanked = 0
    for found in binaries:
        for _kind, arch, start, payload in found:
            if arch != args.keep:
                data[start:start + payload] = bytes(payload)
                blanked += payload
    open(args.target, "wb").write(bytes(data))
    print(f"{len(binaries)} fat binaries; {blanked / 1e6:.1f} MB of other architectures' code blanked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
