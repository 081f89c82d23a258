"""The definitions layer as a part of the scan: reading definitions once, safely, with YAML
anchors resolved (through the CLI, on realistic files)."""

from __future__ import annotations

import os

from helpers import concise_rows, write
from test_jobs import CRONJOB_ALLOW, CRONJOB_FORBID, scripts


def rows(cli, *args):
    status, out, err = cli("scan", "--output-format", "concise", *args)
    return status, concise_rows(out), out, err


def test_a_fifo_named_like_a_unit_does_not_block_the_run(cli, tmp_path):
    os.mkfifo(tmp_path / "nightly.timer")  # named explicitly: never opened
    write(tmp_path, "cronjob.yaml", CRONJOB_ALLOW)
    status, got, out, err = rows(cli, "nightly.timer", "cronjob.yaml", "--select", "LCK6")
    assert status == 2, out
    assert "nightly.timer: not a regular file" in err
    assert got == [("cronjob.yaml", 2, "LCK601")], out


def test_a_binary_definition_named_explicitly_is_a_warning(cli, tmp_path):
    write(tmp_path, "backup.cron", b"\0\x01\x02 * * * * /opt/backup.sh\n")
    status, got, out, err = rows(cli, "backup.cron")
    assert got == [] and status == 0, out
    assert "backup.cron: binary file, not checked" in err


def test_policy_through_a_yaml_alias_is_read(cli, tmp_path):
    """An alias to an anchor defined earlier in the file carries its value (and an alias
    whose anchor says Allow is still the default)."""
    scripts(tmp_path)
    forbid = CRONJOB_FORBID.replace(
        "metadata:\n", "metadata:\n  annotations:\n    policy: &policy Forbid\n", 1
    ).replace("concurrencyPolicy: Forbid", "concurrencyPolicy: *policy")
    write(tmp_path, "forbid.yaml", forbid)
    allow = forbid.replace("&policy Forbid", "&policy Allow").replace("name: backup", "name: b2")
    write(tmp_path, "allow.yaml", allow)
    _, got, out, _ = rows(cli, "--select", "LCK601,LCK604")
    assert got == [("allow.yaml", 9, "LCK601")], out


def test_cronjob_deep_in_a_large_multi_document_file(cli, tmp_path):
    """A CronJob after many other documents is found (the file is sniffed for it once)."""
    svc = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg{}\ndata:\n  k: v\n"
    head = "".join(svc.format(i) for i in range(200))
    write(tmp_path, "bundle.yaml", head + "---\n" + CRONJOB_ALLOW)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("bundle.yaml", head.count("\n") + 3, "LCK601")], out
