"""Suggestions are built from rewritten shell text, parsed again with tree-sitter-bash: the
characters that crash its 0.25 grammar must not reach it from there either."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
from lockcheck.engine import analyze_text
text = '#!/bin/bash\nmkdir /var/lib/x.lock || exit 0\necho x{\U000F1862}\nrmdir /var/lib/x.lock\n'
_, findings = analyze_text("x.sh", text, "shell")
print(sorted((f.code, f.span.line, f.suggestion is not None) for f in findings))
"""


def test_suggestions_survive_code_points_that_crash_the_grammar():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "('LCK101', 2, True)" in out.stdout
