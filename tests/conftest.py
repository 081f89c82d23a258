"""Fixtures shared by the CLI tests."""

from __future__ import annotations

import pytest

from lockcheck.cli import main


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """Run ``lockcheck`` in-process in ``tmp_path``: returns (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR", "LOCKCHECK_OUTPUT_FORMAT", "CI"):
        monkeypatch.delenv(var, raising=False)

    def run(*args: str):
        status = main(list(args))
        out, err = capsys.readouterr()
        return status, out, err

    return run
