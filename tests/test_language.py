"""Which files are read as shell or Python (through the CLI)."""

from __future__ import annotations

import json
import subprocess
import sys

SILENT_SKIP = "mkdir /var/lock/nightly.lock || {{ echo busy; exit 0; }}\n"


def scan(*args: str, cwd) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--output-format", "json", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert out.returncode in (0, 1), out.stderr
    return sorted({f["filename"].rsplit("/", 1)[-1] for f in json.loads(out.stdout)})


def test_shebang_decides_and_extension_is_the_fallback(tmp_path):
    files = {
        "plain.sh": SILENT_SKIP,  # no shebang: by extension
        "nightly": "#!/usr/bin/env bash\n" + SILENT_SKIP,  # no extension: by shebang
        "env-s": "#!/usr/bin/env -S bash -eu\n" + SILENT_SKIP,
        "busy.ksh": "#!/bin/ksh\n" + SILENT_SKIP,
        "zsh-named.sh": "#!/bin/zsh\n" + SILENT_SKIP,  # zsh is not read
        "perl-job": "#!/usr/bin/perl\n" + SILENT_SKIP,
        "notes.txt": SILENT_SKIP,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text.replace("{{", "{").replace("}}", "}"))
    assert scan(".", cwd=tmp_path) == ["busy.ksh", "env-s", "nightly", "plain.sh"]
