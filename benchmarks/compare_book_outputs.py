"""Compare two folders of executed notebooks (issue #34: warm kernels give the normal kernel's pages); not a test.

Run: ``.venv/bin/python benchmarks/compare_book_outputs.py A B`` where A and B were built by
``python -m lgacc.book.run --output-dir A`` and ``... --no-warm-kernel --output-dir B`` for the same spec (with the
executed-notebook cache out of the way, e.g. ``LGACC_CACHE_DIR`` pointing at a copy without its ``notebooks/``).

Each page's outputs are compared (metadata, execution counts and times left out) after masking what differs between
any two runs of the same kernel: pandas' Styler table ids (``T_`` and five random hex digits) and object addresses
(``at 0x...``).  Text and HTML outputs must then be equal; an image must be byte-identical, else it is reported with
both sizes.  Exit status 1 when a page differs.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

#: What differs between two runs of the same notebook on the same kernel, masked before comparing.
VOLATILE = ((re.compile(r"T_[0-9a-f]{5}"), "T_xxxxx"), (re.compile(r" at 0x[0-9a-f]+"), " at 0x..."))


def _masked(text: str) -> str:
    for pattern, mask in VOLATILE:
        text = pattern.sub(mask, text)
    return text


def _outputs(path: Path) -> list[tuple[int, str, object]]:
    notebook = json.loads(path.read_text())
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                found.append((index, f"stream:{output.get('name')}", _masked("".join(output.get("text", "")))))
            elif kind in ("display_data", "execute_result"):
                for mime, value in sorted(output.get("data", {}).items()):
                    value = "".join(value) if isinstance(value, list) else value
                    found.append((index, mime, value if mime.startswith("image/") else _masked(str(value))))
            elif kind == "error":
                found.append((index, "error", (output.get("ename"), output.get("evalue"))))
    return found


def compare(a: Path, b: Path) -> list[str]:
    problems = []
    pages = sorted(p.name for p in a.glob("*.ipynb"))
    missing = sorted(set(pages) ^ {p.name for p in b.glob("*.ipynb")})
    if missing:
        problems.append(f"pages in one folder only: {missing}")
    for name in pages:
        if not (b / name).exists():
            continue
        left, right = _outputs(a / name), _outputs(b / name)
        if len(left) != len(right):
            problems.append(f"{name}: {len(left)} outputs against {len(right)}")
            continue
        for (cell, mime, x), (cell_b, mime_b, y) in zip(left, right):
            if (cell, mime) != (cell_b, mime_b):
                problems.append(f"{name}: cell {cell} {mime} against cell {cell_b} {mime_b}")
            elif mime.startswith("image/") and mime != "image/svg+xml":
                if x != y:
                    sizes = (len(base64.b64decode(x)), len(base64.b64decode(y)))
                    problems.append(f"{name}: cell {cell} {mime} differs (bytes {sizes[0]} against {sizes[1]})")
            elif x != y:
                problems.append(f"{name}: cell {cell} {mime} differs: {str(x)[:160]!r} against {str(y)[:160]!r}")
    print(f"{len(pages)} pages compared, {sum(len(_outputs(a / n)) for n in pages)} outputs: "
          f"{'identical' if not problems else f'{len(problems)} differences'}")
    for problem in problems:
        print("  " + problem)
    return problems


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if compare(Path(sys.argv[1]), Path(sys.argv[2])) else 0)
