"""Which files are job definitions, by path and content (RULES.md, "Job definitions")."""

from __future__ import annotations

import os
import re

SNIFF = 64 * 1024
AIRFLOW_SNIFF = 1 << 20
_CRONJOB = re.compile(rb"^[ \t]*kind:[ \t]*[\"']?CronJob\b", re.M)
_TASK_NS = "schemas.microsoft.com/windows/2004/02/mit/task"
_AIRFLOW = re.compile(rb"^\s*(from\s+airflow[\s.]|import\s+airflow\b)", re.M)
_DAG = re.compile(rb"\bDAG\s*\(|@dag\b|\bdag\s*\(")


def _read(path: str, n: int = SNIFF) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def head_size(lower_path: str) -> int:
    """How many leading bytes :func:`kind_of` reads of a file (its lower-cased path): the
    kinds recognised by content need :data:`SNIFF` bytes, the others a head (at least
    the 256 bytes a shebang needs)."""
    if lower_path.endswith(_BY_CONTENT):
        return SNIFF
    return 4096  # a Windows task's root element, in UTF-16


_BY_CONTENT = (".yml", ".yaml", ".tpl", ".nomad", ".nomad.hcl")


def kind_of(path: str, head: bytes | None = None) -> str | None:
    """The definition kind of a file that is not a script (None: not a definition); ``head``:
    its first :func:`head_size` bytes when the caller has read them (the file is then not
    opened again)."""
    if head is None:
        head = _read(path, head_size(path.lower()))
    p = path.replace("\\", "/") if "\\" in path else path
    cut = p.rfind("/") + 1
    lower = p[cut:].lower()
    # the directories as "/a/b/": a component C of them is "/C/" in it (one substring search
    # each, instead of splitting every path of the walk into its components)
    dirs = "/" + p[:cut]
    if lower == "crontab" or lower.endswith((".cron", ".crontab")) or "/cron.d/" in dirs:
        return "crontab"
    if lower == "dockerfile" or lower.startswith("dockerfile.") or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.endswith((".timer", ".service")):
        return "systemd"
    if lower.endswith((".nomad", ".nomad.hcl")):
        return "nomad" if b"periodic" in head else None
    if lower.endswith((".yml", ".yaml")):
        if dirs.endswith("/.github/workflows/"):
            return "github"
        if lower == ".gitlab-ci.yml":
            return "gitlab"
        return "k8s" if _cronjob(head) else None
    if lower.endswith(".tpl") and "/templates/" in dirs:
        return "k8s" if _cronjob(head) else None
    if head.startswith(_XML_STARTS) or head[:256].lstrip().startswith(_XML_STARTS):
        from .windows import decode

        if _TASK_NS in decode(head[:4096]):
            return "windows"
    return None


_XML_STARTS = (b"\xff\xfe", b"\xfe\xff", b"<\0", b"\0<", b"<?xml", b"<Task", b"\xef\xbb\xbf<")


def _cronjob(data: bytes) -> bool:
    # memchr from one "J" to the next: a YAML file holds few (most none: 3,130 of
    # bitnami/charts' 3,555), and a substring search over 64 KiB costs as much as the rest
    # of the sniff; the regex only where "CronJob" is written
    i = data.find(b"J", 4)
    while i >= 0:
        if data[i - 4 : i + 3] == b"CronJob":
            return bool(_CRONJOB.search(data))
        i = data.find(b"J", i + 1)
    return False


def is_airflow(path: str, data: bytes | None = None) -> bool:
    """A Python file that imports airflow and builds a DAG (``data``: its bytes, when read)."""
    if not path.endswith(".py") or os.path.basename(path).startswith("test_"):
        return False
    data = _read(path, AIRFLOW_SNIFF) if data is None else data[:AIRFLOW_SNIFF]
    return b"airflow" in data and bool(_AIRFLOW.search(data) and _DAG.search(data))
