"""The scan analyses each file while the walk of the tree goes on (issue #15): a tree with few
files to analyse among many (a Helm chart collection: thousands of YAML files, a few dozen
job definitions) no longer pays for its analysis after the walk.  Through
``lockcheck.runner.run_walk`` (what ``lockcheck scan`` runs) with walks that wait on the
analysis, and through the CLI."""

from __future__ import annotations

import time

from helpers import concise_rows, write

from lockcheck import runner, workers
from lockcheck.config import Overrides, Resolver
from lockcheck.discover import walk

LOCKED = '#!/bin/sh\nexec 9>"$XDG_RUNTIME_DIR/j{i}.lock"\nflock -n 9 || exit 0\nrm -f /tmp/x{i}\n'
UNLOCKED_PY = "import fcntl\nfh = open('/tmp/j{i}.lock', 'w')\nfcntl.flock(fh, fcntl.LOCK_EX)\n"


def targets_of(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return [t for t in walk(["."], Resolver(Overrides())) if t is not None]


def counting_workers(monkeypatch) -> list[int]:
    started: list[int] = []
    real_init = workers._Worker.__init__

    def counting_init(self, *a, **k):
        started.append(1)
        real_init(self, *a, **k)

    monkeypatch.setattr(workers._Worker, "__init__", counting_init)
    return started


def test_each_file_is_analysed_while_the_walk_goes_on(tmp_path, monkeypatch):
    """A walk that yields its next file only once the last one's result is in (ticking
    meanwhile, as the real walk does after each directory) finishes: results come back while
    it runs, not after it."""
    for i in range(3):
        write(tmp_path, f"jobs/j{i}.sh", LOCKED.format(i=i))
    found = targets_of(tmp_path, monkeypatch)
    done: list[int] = []
    waited_out: list[int] = []

    def slow_walk():
        for n, t in enumerate(found):
            yield t
            end = time.monotonic() + 20
            while len(done) <= n and time.monotonic() < end:
                time.sleep(0.01)
                yield None  # a directory done: the runner looks after its workers
            if len(done) <= n:
                waited_out.append(n)

    targets, results = runner.run_walk(slow_walk(), progress=lambda d, _n: done.append(d))
    assert not waited_out, "no result came back before the walk ended"
    assert [t.display for t in targets] == [t.display for t in found]
    assert [r.display for r in results] == [t.display for t in found]
    assert all(r.findings for r in results)  # each busy branch exits 0 (LCK401)


def test_a_walk_slower_than_its_analysis_needs_one_worker(tmp_path, monkeypatch):
    for i in range(12):
        write(tmp_path, f"jobs/j{i}.py", UNLOCKED_PY.format(i=i))
    found = targets_of(tmp_path, monkeypatch)
    started = counting_workers(monkeypatch)
    done: list[int] = []

    def slow_walk():
        for n, t in enumerate(found):
            yield t
            while len(done) <= n:
                time.sleep(0.005)
                yield None

    _, results = runner.run_walk(slow_walk(), progress=lambda d, _n: done.append(d), jobs=4)
    assert len(results) == 12 and len(started) == 1


def test_files_waiting_for_a_worker_start_more_up_to_jobs(tmp_path, monkeypatch):
    """The negative: 30 Python scripts found at once are work enough for more workers (each
    one pays from ten Python files waiting), never more than ``jobs``; the results are those
    of a serial run."""
    for i in range(30):
        write(tmp_path, f"jobs/j{i:02}.py", UNLOCKED_PY.format(i=i))
    found = targets_of(tmp_path, monkeypatch)
    serial = runner.run(found, jobs=1)
    started = counting_workers(monkeypatch)
    _, results = runner.run_walk(iter(found), jobs=2)
    assert len(started) == 2

    def summary(rs):
        return [(r.display, [(f.code, f.span.line) for f in r.findings]) for r in rs]

    assert summary(results) == summary(serial)


def test_when_the_walk_ends_the_files_left_get_the_workers_the_run_pays_for(tmp_path, monkeypatch):
    """Fourteen Python scripts, never ten waiting at once during the walk (one worker), yet
    work enough for two in all: the ones still waiting when the walk ends get the second."""
    for i in range(14):
        write(tmp_path, f"jobs/j{i:02}.py", UNLOCKED_PY.format(i=i))
    found = targets_of(tmp_path, monkeypatch)
    started = counting_workers(monkeypatch)
    done: list[int] = []

    def walk_in_two():
        yield from found[:5]
        while len(done) < 5:  # the first five analysed before the walk goes on
            time.sleep(0.005)
            yield None
        assert len(started) == 1
        yield from found[5:]

    _, results = runner.run_walk(walk_in_two(), progress=lambda d, _n: done.append(d), jobs=2)
    assert len(results) == 14 and len(started) == 2


def test_without_fork_the_walk_is_analysed_in_process(tmp_path, monkeypatch):
    for i in range(3):
        write(tmp_path, f"jobs/j{i}.sh", LOCKED.format(i=i))
    found = targets_of(tmp_path, monkeypatch)
    pooled = runner.run(found)
    monkeypatch.delattr(workers.os, "fork")
    targets, results = runner.run_walk(iter(found))
    assert [t.display for t in targets] == [t.display for t in found]
    assert [[f.code for f in r.findings] for r in results] == [
        [f.code for f in r.findings] for r in pooled
    ]


def test_scan_reports_walk_errors_and_lists_what_it_found(cli, tmp_path):
    """Through the CLI: a path that does not exist is an error line and status 2, the other
    path is still scanned; ``--show-files`` lists what the walk found."""
    write(tmp_path, "jobs/a.sh", LOCKED.format(i=0))
    write(tmp_path, "k8s/cronjob.yaml", "apiVersion: batch/v1\nkind: CronJob\nspec: {}\n")
    status, out, err = cli("scan", "--output-format", "concise", "jobs", "missing")
    assert status == 2 and "missing: No such file or directory" in err
    assert concise_rows(out) == [("jobs/a.sh", 3, "LCK401")], out
    status, out, _ = cli("scan", "--show-files", ".")
    assert out.split() == ["jobs/a.sh", "k8s/cronjob.yaml"] and status == 0
