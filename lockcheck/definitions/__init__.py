"""Job definitions: the scheduler objects that start scripts (crontabs, systemd timers,
Kubernetes CronJobs, CI workflows, Nomad jobs, Airflow DAGs, Windows tasks).

Each kind has a module that reads one file into a :class:`Definition`: the scheduler objects
(:class:`Entry`) with their overlap policy and bounds as found (:class:`Setting`: a value and
its line, or missing with the line RULES.md names for a missing key) and the commands they
run.  The LCK6xx rules (``lockcheck.checks.jobs``) read only this model.  Nothing here
executes, imports or renders anything of the scanned repository.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

KINDS = (
    "crontab",
    "systemd",
    "k8s",
    "github",
    "gitlab",
    "windows",
    "nomad",
    "airflow",
    "dockerfile",
)


@dataclass
class Setting:
    """A key as found: ``value`` None when it is missing (``line`` is then the line of the
    object that lacks it); ``templated`` when the value is a template (unknown)."""

    value: str | None
    line: int
    col: int = 1
    templated: bool = False

    @property
    def present(self) -> bool:
        return self.value is not None or self.templated


@dataclass
class Command:
    text: str  # the command as written (a shell line, an ExecStart=, a run: script)
    line: int
    col: int = 1
    cwd: str | None = None  # working directory relative to the tree root (workflow steps)
    # the lock file when the entry wraps the command in flock/run-one/lckdo/... ("" unnamed)
    wrapped: str | None = None
    # the text is a shell script run by this shell ("sh", "bash -e"); None: an argv or unknown
    shell: str | None = None


@dataclass
class Entry:
    """One scheduler object: a crontab line, a CronJob, a timer's service, a scheduled
    workflow (its jobs in ``jobs``), a GitLab job, a Nomad job, a DAG, a Windows task."""

    kind: str
    name: str
    line: int
    col: int = 1
    settings: dict[str, Setting] = field(default_factory=dict)
    commands: list[Command] = field(default_factory=list)
    scheduled: bool = True
    jobs: list[Entry] = field(default_factory=list)
    # keys may come from a template action inside the object: missing keys are unknown
    open: bool = False
    # where a key can be added, read with the file (the fixes need no second parse): per
    # dotted key path, (the key's line, line and column of the first key of its block mapping)
    anchors: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def get(self, key: str) -> Setting:
        return self.settings.get(key) or Setting(None, self.line, self.col)


@dataclass
class DefError:
    line: int
    col: int
    message: str


@dataclass
class Definition:
    path: str  # as displayed
    kind: str
    text: str
    entries: list[Entry] = field(default_factory=list)
    errors: list[DefError] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)  # line -> comment, "#" syntax


def parse(kind: str, path: str, text: str) -> Definition:
    """Read one definition file of ``kind`` (one of :data:`KINDS`)."""
    module = importlib.import_module(f"{__name__}.{kind}")
    return module.parse(path, text)
