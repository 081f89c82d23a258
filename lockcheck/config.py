"""Configuration files: ``[tool.lockcheck]`` in ``pyproject.toml``, or top-level keys in
``lockcheck.toml`` / ``.lockcheck.toml``.

Discovery follows ruff: from a directory upwards, the first directory holding a configuration
wins; inside one directory ``.lockcheck.toml`` beats ``lockcheck.toml`` beats a
``pyproject.toml`` that has a ``[tool.lockcheck]`` table (one without it is passed over).
"""

from __future__ import annotations

import os
import sys

from .collector import paused
from .hints import Any
from .records import field, record, replace
from .settings import Settings

CONFIG_NAMES = (".lockcheck.toml", "lockcheck.toml", "pyproject.toml")

# directories skipped while walking unless ``exclude`` replaces this list (as in ruff)
DEFAULT_EXCLUDE = [
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    "build",
    "dist",
]

FAIL_ON = ("error", "warning", "info")

KEYS = {
    "select",
    "extend-select",
    "ignore",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "synced-paths",
    "skip-exit-code",
    "fail-on",
    "strict",
    "file-timeout",
    "file-memory",
    "definitions",
}


class ConfigError(Exception):
    """A configuration or usage problem: the CLI prints ``lockcheck: error: <message>`` and
    exits 2."""


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# --------------------------------------------------------------------------- rule selectors


def validate_selector(selector: str) -> str | None:
    """The upper-cased selector if it names at least one rule ('ALL', a code or a prefix)."""
    from .checks import RULES

    s = selector.strip().upper()
    if s == "ALL":
        return s
    if s and any(code.startswith(s) for code in RULES):
        return s
    return None


def check_selectors(values: list[str], where: str) -> list[str]:
    out = []
    for v in values:
        s = validate_selector(v)
        if s is None:
            raise ConfigError(f"{where}: unknown rule selector '{v}'")
        out.append(s)
    return out


# --------------------------------------------------------------------------- files


@record
class ConfigFile:
    path: str
    data: dict[str, Any]  # the lockcheck table
    table: str  # "[tool.lockcheck]" for pyproject.toml, "" otherwise


def _read_toml(path: str) -> dict[str, Any]:
    # imported here: a run without a configuration file never pays for the TOML parser;
    # with the collector paused, as lockcheck.runner.preload's imports (its import set off
    # four collections, one of the older generation, that only traversed what it built)
    with paused():
        if sys.version_info >= (3, 11):  # pragma: no cover - depends on the interpreter
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display_path(path)}: invalid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{display_path(path)}: invalid TOML: not UTF-8 ({exc.reason})") from exc
    except RecursionError as exc:
        raise ConfigError(f"{display_path(path)}: invalid TOML: nested too deeply") from exc
    except OSError as exc:
        raise ConfigError(f"{display_path(path)}: {exc.strerror or exc}") from exc


def read_config(path: str, warnings: list[str] | None = None) -> ConfigFile | None:
    """The lockcheck table of a configuration file (None: a pyproject.toml without one).

    With ``warnings``, a ``pyproject.toml`` that cannot be read as TOML is another tool's file
    gone bad, not a lockcheck configuration: it is passed over with a warning line."""
    pyproject = os.path.basename(path) == "pyproject.toml"
    try:
        doc = _read_toml(path)
    except ConfigError as exc:
        if warnings is None or not pyproject:
            raise
        warnings.append(f"{exc}; passed over")
        return None
    if pyproject:
        tool = doc.get("tool")
        if not isinstance(tool, dict) or "lockcheck" not in tool:
            return None
        table = tool["lockcheck"]
        if not isinstance(table, dict):
            raise ConfigError(f"{display_path(path)}: [tool.lockcheck] must be a table")
        return ConfigFile(path, table, "[tool.lockcheck]")
    return ConfigFile(path, doc, "")


# --------------------------------------------------------------------------- values


def _where(cfg: ConfigFile, key: str | None = None) -> str:
    """``pyproject.toml: [tool.lockcheck]`` / ``lockcheck.toml:`` (+ `` key 'k'``)."""
    head = display_path(cfg.path) + ":"
    if cfg.table:
        head += f" {cfg.table}"
    return head if key is None else f"{head} key '{key}'"


def _str_list(cfg: ConfigFile, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{_where(cfg, key)}: expected a list of strings")
    return list(value)


def apply_config(cfg: ConfigFile, settings: Settings) -> Settings:
    """``settings`` updated from ``cfg`` (validated)."""
    s = replace(settings)
    data = cfg.data
    for key in data:
        if key not in KEYS:
            import difflib

            close = difflib.get_close_matches(key, list(KEYS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{_where(cfg)} unknown key '{key}'{hint}")
    base = os.path.dirname(os.path.abspath(cfg.path))
    if "select" in data:
        s.select = check_selectors(_str_list(cfg, "select", data["select"]), _where(cfg, "select"))
    if "extend-select" in data:
        s.extend_select = check_selectors(
            _str_list(cfg, "extend-select", data["extend-select"]), _where(cfg, "extend-select")
        )
    if "ignore" in data:
        s.ignore = check_selectors(_str_list(cfg, "ignore", data["ignore"]), _where(cfg, "ignore"))
    if "exclude" in data:
        s.exclude = _str_list(cfg, "exclude", data["exclude"])
    if "extend-exclude" in data:
        s.extend_exclude = _str_list(cfg, "extend-exclude", data["extend-exclude"])
    if "per-file-ignores" in data:
        pfi = data["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{_where(cfg, 'per-file-ignores')}: expected a table")
        out: dict[str, list[str]] = {}
        for glob, codes in pfi.items():
            where = _where(cfg, f"per-file-ignores.{glob}")
            if isinstance(codes, str):
                codes = [codes]
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{where}: expected a list of rule codes")
            out[glob] = check_selectors(codes, where)
        s.per_file_ignores = out
    if "synced-paths" in data:
        roots = _str_list(cfg, "synced-paths", data["synced-paths"])
        s.synced_paths = [_abs_root(r, base) for r in roots]
    if "skip-exit-code" in data:
        v = data["skip-exit-code"]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 255:
            raise ConfigError(f"{_where(cfg, 'skip-exit-code')}: expected an integer 1..255")
        s.skip_exit_code = v
    if "fail-on" in data:
        v = data["fail-on"]
        if v not in FAIL_ON:
            raise ConfigError(
                f"{_where(cfg, 'fail-on')}: expected one of {', '.join(FAIL_ON)}, got {v!r}"
            )
        s.fail_on = v
    if "strict" in data:
        v = data["strict"]
        if not isinstance(v, bool):
            raise ConfigError(f"{_where(cfg, 'strict')}: expected true or false")
        s.strict = v
    if "file-timeout" in data:
        try:
            s.file_timeout = parse_timeout(data["file-timeout"])
        except ValueError as exc:
            raise ConfigError(f"{_where(cfg, 'file-timeout')}: {exc}") from None
    if "file-memory" in data:
        try:
            s.file_memory = parse_size(data["file-memory"])
        except ValueError as exc:
            raise ConfigError(f"{_where(cfg, 'file-memory')}: {exc}") from None
    if "definitions" in data:
        v = data["definitions"]
        if not isinstance(v, bool):
            raise ConfigError(f"{_where(cfg, 'definitions')}: expected true or false")
        s.definitions = v
    s.config_file = cfg.path
    s.project_root = base
    return s


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_timeout(value: object) -> float:
    """Seconds per file (a number or a numeric string; 0 means no bound)."""
    if isinstance(value, bool):
        raise ValueError("expected a number of seconds")
    try:
        t = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"expected a number of seconds, got {value!r}") from None
    if not 0 <= t < 1e9 or t != t:
        raise ValueError(f"expected a number of seconds >= 0, got {value!r}")
    return t


def parse_size(value: object) -> int:
    """Bytes: an integer, or a string such as ``512MiB``, ``1G``, ``2 GiB`` (0: no bound)."""
    import re

    if isinstance(value, bool):
        raise ValueError("expected a size such as 1GiB")
    if isinstance(value, int):
        n = value
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
        if m is None:
            raise ValueError(f"expected a size such as 512MiB or 1GiB, got {value!r}")
        n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if n < 0:
        raise ValueError(f"expected a size >= 0, got {value!r}")
    if 0 < n < 16 << 20:
        raise ValueError(f"a memory bound below 16 MiB cannot run the analysis, got {value!r}")
    return n


def _abs_root(root: str, base: str) -> str:
    """A synced root as written, made absolute against the config's directory when it is a
    plain relative path (``~`` and absolute paths are kept)."""
    if root.startswith(("~", "/", "\\\\", "//")) or "://" in root:
        return root
    return os.path.normpath(os.path.join(base, root))


def default_settings() -> Settings:
    return Settings(exclude=list(DEFAULT_EXCLUDE), project_root=os.getcwd())


# --------------------------------------------------------------------------- command line


@record
class Overrides:
    """Settings given on the command line; they win over configuration files."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    synced_paths: list[str] = field(default_factory=list)
    skip_exit_code: int | None = None
    fail_on: str | None = None
    file_timeout: float | None = None
    file_memory: int | None = None

    def apply(self, settings: Settings) -> Settings:
        s = replace(settings)
        if self.select is not None:
            s.select = list(self.select)
            s.extend_select = []
        s.extend_select = list(s.extend_select) + list(self.extend_select)
        s.ignore = list(s.ignore) + list(self.ignore)
        if self.exclude is not None:
            s.exclude = list(self.exclude)
        s.extend_exclude = list(s.extend_exclude) + list(self.extend_exclude)
        s.synced_paths = list(s.synced_paths) + [
            os.path.abspath(p) if not p.startswith("~") else p for p in self.synced_paths
        ]
        if self.skip_exit_code is not None:
            s.skip_exit_code = self.skip_exit_code
        if self.fail_on is not None:
            s.fail_on = self.fail_on
            s.strict = False
        if self.file_timeout is not None:
            s.file_timeout = self.file_timeout
        if self.file_memory is not None:
            s.file_memory = self.file_memory
        return s


class Resolver:
    """The settings for each file: the nearest configuration (cached per directory) with the
    command-line overrides on top; ``--config`` or ``--isolated`` make one for all."""

    def __init__(
        self, overrides: Overrides, config: str | None = None, isolated: bool = False
    ) -> None:
        self.overrides = overrides
        self.isolated = isolated
        self._fixed: Settings | None = None
        self._cache: dict[str, Settings] = {}
        self._cfg_cache: dict[str, ConfigFile | None] = {}
        self.warnings: list[str] = []  # one line each, for the CLI to print
        if config is not None:
            if not os.path.isfile(config):
                raise ConfigError(f"{config}: No such file or directory")
            cfg = read_config(config)
            if cfg is None:  # a pyproject.toml without the table: an empty configuration
                cfg = ConfigFile(config, {}, "[tool.lockcheck]")
            self._fixed = overrides.apply(apply_config(cfg, default_settings()))
        elif isolated:
            self._fixed = overrides.apply(default_settings())

    def _config_for_dir(self, d: str) -> ConfigFile | None:
        if d in self._cfg_cache:
            return self._cfg_cache[d]
        found = None
        for name in CONFIG_NAMES:
            cand = os.path.join(d, name)
            if os.path.isfile(cand):
                found = read_config(cand, self.warnings)
                if found is not None:
                    break
        if found is None:
            parent = os.path.dirname(d)
            found = None if parent == d else self._config_for_dir(parent)
        self._cfg_cache[d] = found
        return found

    def for_dir(self, directory: str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        d = os.path.abspath(directory)
        if d not in self._cache:
            cfg = self._config_for_dir(d)
            key = cfg.path if cfg is not None else ""
            if key not in self._cache:
                base = default_settings() if cfg is None else apply_config(cfg, default_settings())
                self._cache[key] = self.overrides.apply(base)
            self._cache[d] = self._cache[key]
        return self._cache[d]

    def for_file(self, path: str) -> Settings:
        return self.for_dir(os.path.dirname(os.path.abspath(path)))


def fail_threshold(settings: Settings) -> str:
    """The lowest severity that fails the run."""
    if settings.strict:
        return "info"
    return settings.fail_on
