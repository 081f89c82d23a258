"""Scripts that a Windows Task Scheduler definition of the scanned tree runs as SYSTEM,
LocalService or NetworkService: their ``%TEMP%`` is C:\\Windows\\Temp, where every local user
may create entries, so ``$env:TEMP``/``[IO.Path]::GetTempPath()``/``process.env.TEMP`` locks
there are LCK502 (RULES.md: private unless such a definition runs the script).  Those scripts
are analysed again with :attr:`lockcheck.model.FileFacts.system_account` set."""

from __future__ import annotations

from .windows import runs_as_service_account

LANGUAGES = ("powershell", "javascript")


def service_account_scripts(defs, tree) -> set[str]:
    """Tree-relative paths of the scripts a service-account task runs."""
    out: set[str] = set()
    for _t, _r, d in defs:
        if d.kind != "windows":
            continue
        for e in d.entries:
            if e.kind != "windows-task" or not runs_as_service_account(e.get("UserId").value):
                continue
            for c in e.commands:
                sc = tree.resolve(c, "")
                if sc is not None:
                    out.add(sc.rel)
    return out


def system_account_targets(targets, results, tree, rels: set[str]) -> list:
    """The scripts named by ``rels``, to analyse again as run by a service account:
    (index, flags)."""
    out = []
    for i, r in enumerate(results):
        if r.language not in LANGUAGES or r.skipped or r.error or tree.rel(r.path) not in rels:
            continue
        out.append((i, {"system_account": True}))
    return out
