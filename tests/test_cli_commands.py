"""`lockcheck rule`, `lockcheck init`, progress display and large runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lockcheck.checks import RULES
from lockcheck.cli import main


def test_rule_prints_the_page(cli):
    from lockcheck.docs import rule_page

    status, out, _ = cli("rule", "LCK401")
    assert status == 0
    assert out.rstrip("\n") == rule_page("LCK401").rstrip("\n")
    status, out, _ = cli("rule", "lck401")  # case-insensitive
    assert status == 0 and out.startswith("# LCK401")


def test_rule_json(cli):
    status, out, _ = cli("rule", "LCK403", "--output-format", "json")
    data = json.loads(out)
    assert status == 0
    assert data["code"] == "LCK403"
    assert data["name"] == "flock-default-conflict-code"
    assert data["severity"] == "warning"
    assert data["fix"] == "unsafe"
    assert data["url"].endswith("/rules/LCK403.md")
    assert "explanation" in data and data["explanation"]


def test_rule_all(cli):
    status, out, _ = cli("rule", "--all")
    lines = out.splitlines()
    assert status == 0 and len(lines) == len(RULES)
    row = next(x for x in lines if x.startswith("LCK201"))
    assert row.split() == ["LCK201", "flock-file-removed", "error", "safe"]
    row = next(x for x in lines if x.startswith("LCK104"))
    assert row.split() == ["LCK104", "flock-on-network-path", "warning", "-"]
    status, out, _ = cli("rule", "--all", "--output-format", "json")
    data = json.loads(out)
    assert [d["code"] for d in data] == sorted(RULES)
    assert all(d["explanation"].startswith(f"# {d['code']}") for d in data)


def test_rule_errors(cli):
    status, out, err = cli("rule", "LCK999")
    assert (status, out, err) == (2, "", "lockcheck: error: unknown rule code 'LCK999'\n")
    status, _, err = cli("rule")
    assert status == 2 and err.count("\n") == 1


def test_rule_page_falls_back_to_the_registry(cli, monkeypatch):
    import lockcheck.docs as docs

    def no_page(code):
        raise KeyError(code)

    monkeypatch.setattr(docs, "rule_page", no_page)
    status, out, _ = cli("rule", "LCK105")
    assert status == 0
    assert out.startswith("# LCK105: pid-liveness-check\n")
    assert RULES["LCK105"].summary in out


def test_init_templates(cli):
    from lockcheck.fix.templates import render_init

    status, out, _ = cli("init")
    assert status == 0 and out == render_init("shell", "job")
    status, out, _ = cli("init", "--python", "--slot", "nightly-backup")
    assert status == 0 and out == render_init("python", "nightly-backup")
    status, _, err = cli("init", "--shell", "--python")
    assert status == 2 and err.count("\n") == 1


def test_init_template_is_clean_under_lockcheck(cli, tmp_path):
    status, out, _ = cli("init", "--shell", "--slot", "backup")
    (tmp_path / "backup-lock.sh").write_text(out)
    status, out, err = cli("scan", "backup-lock.sh")
    assert status == 0, out + err


def test_progress_only_on_a_terminal_outside_ci(tmp_path):
    """Progress goes to stderr on a terminal after a moment; never in CI."""
    for i in range(30):
        (tmp_path / f"job{i}.sh").write_text("#!/bin/sh\nflock -n 9 || exit 0\n")
    code = (
        "import sys, time\n"
        "from lockcheck import cli, runner\n"
        "cli.Progress.DELAY = 0\n"
        "real = runner.check_target\n"
        "def slow(t):\n"
        "    time.sleep(0.01)\n"
        "    return real(t)\n"
        "runner.check_target = slow\n"
        "sys.stderr.isatty = lambda: True\n"
        "status = cli.main(['scan', '-q', '--output-format', sys.argv[1]])\n"
    )
    env_ci = {"CI": "true", "PATH": "/usr/bin:/bin"}
    env_tty = {"PATH": "/usr/bin:/bin"}

    def run(env, fmt):
        return subprocess.run(
            [sys.executable, "-c", code, fmt],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )

    def run_no_quiet(env, fmt):
        return subprocess.run(
            [sys.executable, "-c", code.replace("'-q', ", ""), fmt],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )

    shown = run_no_quiet(env_tty, "concise")
    assert "checked" in shown.stderr and "/30 files" in shown.stderr, shown.stderr
    assert "checked" not in shown.stdout
    assert "checked" not in run_no_quiet(env_ci, "concise").stderr
    assert "checked" not in run_no_quiet(env_tty, "json").stderr
    assert "checked" not in run(env_tty, "concise").stderr


def test_large_run_uses_the_pool_and_matches_serial(tmp_path, monkeypatch):
    from lockcheck import runner
    from lockcheck.config import Overrides, Resolver
    from lockcheck.discover import discover

    for i in range(60):
        body = f'#!/bin/bash\nexec 9>"$XDG_RUNTIME_DIR/j{i}.lock"\nflock -n 9 || exit 0\n'
        if i % 3 == 0:
            body += "mkdir /tmp/probe && rmdir /tmp/probe\n"
        (tmp_path / f"job{i:03}.sh").write_text(body)
    monkeypatch.chdir(tmp_path)
    targets, errors = discover(["."], Resolver(Overrides()))
    assert not errors and len(targets) == 60
    serial = runner.run(targets, jobs=1)
    pooled = runner.run(targets, jobs=4)

    def summary(results):
        return [(r.display, [(f.code, f.span.line) for f in r.findings]) for r in results]

    assert summary(pooled) == summary(serial)
    assert sum(len(r.findings) for r in serial) >= 60
    # small runs start one worker only (each file is still bounded)
    from lockcheck import workers

    started = []
    real_init = workers._Worker.__init__

    def counting_init(self, *a, **k):
        started.append(1)
        real_init(self, *a, **k)

    monkeypatch.setattr(workers._Worker, "__init__", counting_init)
    assert summary(pooled) == summary(runner.run(targets))  # the default
    assert len(started) <= 2, "a run of 60 shell scripts starts one or two workers, not more"
    started.clear()
    runner.run(targets, jobs=4)
    assert len(started) == 4


def test_cli_main_entry_is_installed_script():
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("lockcheck ")


def test_help_lists_commands(cli):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
