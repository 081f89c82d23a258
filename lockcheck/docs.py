"""Rule pages: the Markdown documentation of each rule and the examples it carries.

The pages live in the repository's ``rules/`` directory and ship inside the package as
``lockcheck.rule_pages``.  Their fenced code blocks are machine-checked examples; the info
string of such a block says what it is (see ``rules/README.md``)::

    ```bash bad lines=5
    ```python good
    ```bash fixed

The first word is the language (``bash``/``sh``/``shell`` or ``python``/``py``), the second
the kind (``bad``, ``good`` or ``fixed``), then ``key=value`` options:

``lines=5,9``      lines a bad block must be flagged on, one entry per expected finding;
                   ``lines=7|5`` accepts either line for that finding (RULES.md lists
                   accepted alternatives for some codes).
``allow=LCK101``   codes a good block may still show at warning or above (a page about one
                   defect can show its cure on a construct another rule advises against).
``file=PATH``      the block is a job definition (``yaml``, ``ini``, ``xml``, ``crontab``,
                   ``hcl``, or ``python`` for a DAG) checked at PATH in a scanned tree.
``script=PATH:lock`` / ``script=PATH:nolock``   the tree also holds a script at PATH that
                   takes a lock or none (the definition's command starts it).
``timer=PATH``     the tree also holds a timer at PATH that starts the block's unit.

A ``fixed`` block is the expected result of applying the page's fix to the nearest bad block
of the same language before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

_CODE = re.compile(r"^LCK[0-9]{3}$")
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_LANGUAGES = {
    "bash": "shell",
    "sh": "shell",
    "shell": "shell",
    "python": "python",
    "py": "python",
    "js": "javascript",
    "javascript": "javascript",
    "ts": "javascript",
    "powershell": "powershell",
    "ps1": "powershell",
    "pwsh": "powershell",
}
_SUFFIXES = {"shell": ".sh", "python": ".py", "javascript": ".js", "powershell": ".ps1"}
# job definitions (``file=`` says which kind by its path)
_LANGUAGES.update(dict.fromkeys(("yaml", "ini", "xml", "crontab", "hcl"), "definition"))
KINDS = ("bad", "good", "fixed")


@dataclass(frozen=True)
class Example:
    """One machine-checked code block of a rule page."""

    code: str  # the page's rule code
    kind: str  # "bad" | "good" | "fixed"
    language: str  # "shell" | "python" | "javascript" | "powershell" | "definition"
    text: str
    # one entry per expected finding of ``code`` (bad blocks): the accepted lines, preferred first
    accepted: tuple[tuple[int, ...], ...] = ()
    allow: tuple[str, ...] = ()  # codes a good block may still show at warning or above
    page_line: int = 0  # line of the opening fence in the page
    info: str = ""
    file: str = ""  # a job definition's path in the scanned tree
    scripts: tuple[tuple[str, bool], ...] = ()  # (path, takes a lock) beside the definition
    timer: str = ""  # a timer's path that starts the (systemd) definition

    @property
    def lines(self) -> tuple[int, ...]:
        """The preferred expected line of each finding (bad blocks)."""
        return tuple(alts[0] for alts in self.accepted)

    @property
    def suffix(self) -> str:
        return _SUFFIXES.get(self.language, ".py")


def _repo_rules_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "rules"


def _normalise(code: str) -> str:
    c = str(code).strip().upper()
    if not _CODE.match(c):
        raise KeyError(code)
    return c


@cache
def rule_page(code: str) -> str:
    """The Markdown page of ``code``; KeyError for an unknown code."""
    c = _normalise(code)
    name = f"{c}.md"
    try:
        res = resources.files("lockcheck.rule_pages").joinpath(name)
        if res.is_file():
            return res.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, TypeError):
        pass
    path = _repo_rules_dir() / name
    if path.is_file():
        return path.read_text(encoding="utf-8")
    raise KeyError(code)


def available_codes() -> list[str]:
    """Codes that have a page (installed package, else the repository's rules/)."""
    names: set[str] = set()
    try:
        for entry in resources.files("lockcheck.rule_pages").iterdir():
            names.add(entry.name)
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, TypeError):
        pass
    if not names and _repo_rules_dir().is_dir():
        names = {p.name for p in _repo_rules_dir().iterdir()}
    return sorted(n[:-3] for n in names if n.endswith(".md") and _CODE.match(n[:-3]))


def _parse_info(info: str) -> tuple[str | None, str | None, dict[str, str]]:
    words = info.split()
    if len(words) < 2 or words[0].lower() not in _LANGUAGES or words[1] not in KINDS:
        return None, None, {}
    opts: dict[str, str] = {}
    for w in words[2:]:
        key, sep, value = w.partition("=")
        if not sep:
            raise ValueError(f"option without value in code block info {info!r}")
        opts[key] = value
    unknown = set(opts) - {"lines", "allow", "file", "script", "timer"}
    if unknown:
        raise ValueError(f"unknown option {sorted(unknown)} in code block info {info!r}")
    return _LANGUAGES[words[0].lower()], words[1], opts


def _parse_lines(value: str) -> tuple[tuple[int, ...], ...]:
    out = []
    for item in value.split(","):
        item = item.strip()
        if item:
            out.append(tuple(int(x) for x in item.split("|")))
    return tuple(out)


def parse_examples(code: str, page: str) -> list[Example]:
    """The machine-checked code blocks of a page's Markdown text."""
    out: list[Example] = []
    lines = page.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1  # closing fence
        language, kind, opts = _parse_info(info)
        if kind is None:
            continue
        out.append(
            Example(
                code=code,
                kind=kind,
                language=language,
                text="\n".join(body) + "\n",
                accepted=_parse_lines(opts.get("lines", "")),
                allow=tuple(c for c in opts.get("allow", "").upper().split(",") if c),
                page_line=start + 1,
                info=info,
                file=opts.get("file", ""),
                timer=opts.get("timer", ""),
                scripts=tuple(
                    (p, flag == "lock")
                    for p, _, flag in (s.partition(":") for s in opts.get("script", "").split(","))
                    if p
                ),
            )
        )
    return out


def examples(code: str) -> list[Example]:
    """The machine-checked examples of ``code``'s page, in page order."""
    c = _normalise(code)
    return parse_examples(c, rule_page(c))


def fixed_pairs(code: str) -> list[tuple[Example, Example]]:
    """(bad, fixed) pairs: each fixed block with the nearest bad block of its language before
    it."""
    pairs = []
    last_bad: dict[str, Example] = {}
    for ex in examples(code):
        if ex.kind == "bad":
            last_bad[ex.language] = ex
        elif ex.kind == "fixed":
            if ex.language not in last_bad:
                raise ValueError(
                    f"{code}: fixed block at page line {ex.page_line} has no bad block"
                )
            pairs.append((last_bad[ex.language], ex))
    return pairs


def section(code: str, title: str) -> str:
    """The text of a ``## title`` section of the page ('' when absent)."""
    page = rule_page(code)
    out: list[str] = []
    inside = False
    in_fence = False
    for line in page.splitlines():
        if line.startswith("```") or line.startswith("~~~"):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip().lower() == title.lower()
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


def summary(code: str) -> str:
    """The first paragraph of the page's "What it does" (one line, for SARIF
    ``fullDescription``)."""
    text = section(code, "What it does")
    para: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    return " ".join(para)


def title(code: str) -> tuple[str, str]:
    """(code, name) from the page's ``# LCKnnn: name`` heading."""
    for line in rule_page(code).splitlines():
        m = re.match(r"^#\s+(LCK[0-9]{3}):\s*(\S+)\s*$", line)
        if m:
            return m.group(1), m.group(2)
    raise ValueError(f"{code}: page has no '# LCKnnn: name' title")
