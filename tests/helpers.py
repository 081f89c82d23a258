"""Small helpers shared by the CLI tests (``tests/`` is on ``sys.path`` under pytest)."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write ``text`` to ``root/rel``, making its directories."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def concise_rows(out: str) -> list[tuple[str, int, str]]:
    """(path, line, code) of the ``concise`` output lines."""
    rows = []
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit():
            rows.append((parts[0], int(parts[1]), parts[3].split()[0]))
    return rows
