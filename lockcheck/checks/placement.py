"""Where the lock file lives."""

from __future__ import annotations

from ..paths import (
    is_script_itself,
    predictable_name,
    private_first,
    same_path,
    script_relative,
    shared_tmp_dir,
)
from . import Context, rule, shown


@rule(
    "LCK501",
    "lock-beside-script",
    "warning",
    "A lock path derived from the script's location or the working directory.",
    "suggestion",
    help="Lock in a private directory that is the same for every run, not beside the script",
)
def lock_beside_script(ctx: Context):
    for acq in ctx.facts.acquires:
        if acq.service_record or is_script_itself(acq.path):
            continue
        why = script_relative(acq.path)
        if not why:
            continue
        yield ctx.finding(
            "LCK501",
            acq.open_span or acq.span,
            f"lock `{acq.path.render()}`: {why}, which differs between runs",
        )


def _dir(where: str) -> str:
    """``/tmp`` as is; ``the system temporary directory`` (tempfile.gettempdir()) shorter."""
    return where if where.startswith(("/", "C:")) else "temp dir"


def _made_shared_subdir(ctx: Context, path) -> str | None:
    """The shared directory when ``path`` lies in a predictable subdirectory of one that the
    script itself makes with mkdir -p / makedirs(exist_ok=True)."""
    parent = path.dirname()
    if parent is None:
        return None
    system = ctx.facts.system_account
    for made in ctx.facts.dirs_made:
        if same_path(made, parent) and shared_tmp_dir(made, system) and predictable_name(made):
            return shared_tmp_dir(made, system)
    return None


@rule(
    "LCK502",
    "predictable-lock-in-shared-tmp",
    "warning",
    "A predictable lock name in a world-writable directory.",
    "suggestion",
    help="Lock in the service's RuntimeDirectory=, $XDG_RUNTIME_DIR where set, else a 0700 directory under $HOME",
)
def predictable_lock_in_shared_tmp(ctx: Context):
    # one lock taken at several places (a probe `flock -n L true`, then `( ... ) 9>L`) is one
    # finding: at the truncating open when there is one (its harm is the worse), else the first
    acquires = sorted(ctx.facts.acquires, key=lambda a: not a.truncating)
    seen: list = []
    for acq in acquires:
        if acq.service_record or acq.path is None or private_first(acq.path):
            continue
        if any(same_path(acq.path, p) for p in seen):
            continue
        seen.append(acq.path)
        if not predictable_name(acq.path):
            continue
        where = shared_tmp_dir(acq.path, ctx.facts.system_account)
        if where is None:
            where = _made_shared_subdir(ctx, acq.path)
            if where is None:
                continue
        if acq.truncating:
            harm = "open truncates, follows symlinks"
        else:
            harm = "another user can pre-create it"
        yield ctx.finding(
            "LCK502",
            acq.open_span or acq.span,
            f"predictable `{acq.path.render()}` in world-writable {_dir(where)}: {harm}",
            suggestion=shown(acq.placement_suggestion),
        )
