"""Code lines per folder and per file of the kilnflow package (blank lines and comments
excluded), with the soft caps from STYLE.md: core under 10k lines, any file under 600."""
from __future__ import annotations

import io
import os
import sys
import tokenize

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kilnflow")
NOT_CORE = ("keras", "saving", "tools", "compat")
FILE_CAP = 600
CORE_CAP = 10_000


def code_lines(path: str) -> int:
    """Lines holding a token other than comments, newlines and docstring-only strings."""
    with open(path, "rb") as f:
        source = f.read()
    lines = set()
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
                continue
            lines.update(range(tok.start[0], tok.end[0] + 1))
    except tokenize.TokenError:
        return source.count(b"\n")
    return len(lines)


def main() -> int:
    per_folder: dict = {}
    over = []
    core = 0
    for folder, _, files in sorted(os.walk(ROOT)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            n = code_lines(path)
            rel = os.path.relpath(path, ROOT)
            top = rel.split(os.sep)[0] if os.sep in rel else "."
            per_folder[top] = per_folder.get(top, 0) + n
            if top not in NOT_CORE:
                core += n
            if n > FILE_CAP:
                over.append((n, rel))
    for top, n in sorted(per_folder.items()):
        print(f"{n:7d}  kilnflow/{top if top != '.' else ''}")
    print(f"{core:7d}  core (cap {CORE_CAP})")
    for n, rel in sorted(over, reverse=True):
        print(f"{n:7d}  over the {FILE_CAP}-line file cap: kilnflow/{rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
