"""Resolved settings for one run (filled from configuration files and the command line)."""

from __future__ import annotations

from .records import field, record


@record
class Settings:
    select: list[str] = field(default_factory=lambda: ["ALL"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    synced_paths: list[str] = field(default_factory=list)
    skip_exit_code: int = 75
    fail_on: str = "warning"
    strict: bool = False
    file_timeout: float = 20.0  # seconds of wall-clock time per file (0: no bound)
    file_memory: int = 1 << 30  # bytes of address space per file's analysis (0: no bound)
    definitions: bool = True  # read job definitions (LCK6xx)
    config_file: str | None = None  # where these settings came from
    project_root: str | None = None  # directory holding the config file
