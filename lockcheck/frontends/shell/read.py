"""Reading the file: the bytes tree-sitter-bash is given, ``bash -n`` as a second opinion on
code the grammar cannot read, and the prescan before the walk (comments, functions and who
calls them, init-script marks, the broken regions that get LCK000 and the point where the
shell stops reading the file).
"""

from __future__ import annotations

import os
import re

from ...model import ParseError
from ..treesitter import parser as ts_parser
from ..treesitter import source_bytes
from .data import _txt

_RUNS_OTHER_SCRIPT = re.compile(r"#![ \t]*\S*/(?:sh|bash|dash|ksh|mksh|ash)[ \t]+[^-\s]")

_BATS_TEST = re.compile(rb"(?m)^([ \t]*)@test[ \t][^\n]*\{[ \t]*$")

_ESCAPED_COMMAND = re.compile(rb"(?m)^([ \t]*)\\(?=[A-Za-z_])")


def tree_sitter_source(text: str) -> bytes:
    """The bytes to give tree-sitter-bash for ``text`` (see :func:`treesitter.source_bytes`:
    tree-sitter-bash 0.25 reads out of bounds on some code points above U+2FFFF).  A command
    word escaped against aliases at the start of a line (`\\rm -f L`) is glued by
    tree-sitter-bash 0.25 to the line before: its backslash becomes a space (same offsets)."""
    return _ESCAPED_COMMAND.sub(rb"\1 ", source_bytes(text))


# Where tree-sitter-bash 0.25 runs one statement on into the next line: a `[ ... ]` test that
# ends a line (issue 316: `[ $? -eq 0 ]`, a command with a redirection, another `[`: the
# lines between become one command inside the test), and a pipeline of three or more stages
# (issue 347: `a | b | c` then `d` on the next line is read as more words of `c`).
_LINE_END_BRACKET = re.compile(rb"(?<=[ \t])\][ \t]*(?=\r?\n)")


def _pipeline_line_ends(src: bytes):
    """The offsets just past each line that holds two `|` or more and does not end in `|` or
    a backslash (a pipeline that may run on into the next line).  One pass, no regex that
    could backtrack on a long line."""
    start = 0
    while True:
        nl = src.find(b"\n", start)
        if nl < 0:
            return
        if src.count(b"|", start, nl) >= 2:
            line = src[start:nl].rstrip()
            if line and line[-1:] not in (b"|", b"\\") and not line.lstrip().startswith(b"#"):
                yield nl - (len(src[start:nl]) - len(line))
        start = nl + 1


def parse_bash(src: bytes) -> tuple[bytes, object]:
    """Parse ``src`` with tree-sitter-bash and repair the statements it runs together across
    a line end: each such newline (one that lies between two words of one simple command,
    where bash always ends the command) becomes `;` (same offsets, so lines and columns stay
    those of the file) and the text is parsed again, at most a few times.  Returns the bytes
    the tree was parsed from, and the tree."""
    tree = _parser().parse(src)
    for _ in range(4):
        fixes = set()
        ends = [m.end() for m in _LINE_END_BRACKET.finditer(src)]
        ends += list(_pipeline_line_ends(src))
        for end in ends:
            nl = src.index(b"\n", end)
            n = tree.root_node.descendant_for_byte_range(nl, nl + 1)
            if n is None or n.type != "command" or not (n.start_byte < nl < n.end_byte - 1):
                continue  # the newline ends a statement, or lies inside a word or string
            after = src[nl + 1 : nl + 200].lstrip()
            if after[:1] in (b";", b"&", b"|", b")"):
                continue  # `;;` of a case item, a continued list: `;` would not fit there
            fixes.add(nl)
        if not fixes:
            break
        buf = bytearray(src)
        for nl in fixes:
            buf[nl] = ord(";")
        src = bytes(buf)
        tree = _parser().parse(src)
    return src, tree


def _bash_accepts(src: bytes, bats: bool = False) -> bool:
    """Whether ``bash -n`` reads the script (extglob on, as scripts that use it enable it at
    run time).  False when bash rejects it, is missing or does not answer: then the
    tree-sitter verdict stands."""
    import shutil  # only for the few files tree-sitter finds broken: kept off start-up
    import subprocess

    # only absolute PATH entries: an empty or relative one is the directory being scanned,
    # whose `bash` must never run
    dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)]
    bash = shutil.which("bash", path=os.pathsep.join(dirs)) if dirs else None
    if bash is None:
        return False
    if bats:
        # bats turns `@test "name" {` into a function before bash reads the file
        src = _BATS_TEST.sub(rb"\1bats_test_() {", src)
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV")}
    try:
        done = subprocess.run(
            [bash, "--norc", "--noprofile", "-O", "extglob", "-n"],
            input=src,
            capture_output=True,
            timeout=10,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    # an unterminated here-doc is only a warning for bash, but the rest of the file is lost in it
    return done.returncode == 0 and b"here-document" not in done.stderr


def _parser():
    return ts_parser("bash")


OPENERS = {'"', "'", "`", "$(", "{", "((", "$((", "${", "$'", '$"'}

CLOSER_WORDS = {"fi", "done", "esac", "then", "else", "elif", "do"}

_FOREIGN_LINE = re.compile(
    r"^\s*(?:(?:def|class)\s+\w+\b.*:\s*$|import\s+[\w.]+(?:\s+as\s+\w+)?\s*;?\s*$"
    r"|from\s+[\w.]+\s+import\s|(?:try|finally|else):\s*$|(?:elif|except|with|while|for|if)\b.*:\s*$"
    r"|#include\s|package\s+[\w.]+;?\s*$|(?:public|private|const|let|var)\s+\w+\b.*[;{]\s*$)"
)


def _looks_foreign(text: str) -> bool:
    """Python, C, Java or JavaScript source handed to the shell frontend."""
    code = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.lstrip().startswith("#")]
    if not code:
        return False
    foreign = sum(1 for ln in code if _FOREIGN_LINE.match(ln))
    return foreign >= 2 and foreign * 5 >= len(code)


class Reading:
    """The prescan and the broken regions (LCK000, and where reading stops)."""

    def _prescan(self, root) -> None:
        if "### BEGIN INIT INFO" in self.text:
            self.facts.init_script = True
        first = self.text.split("\n", 1)[0]
        if re.match(r"#!\s*\S+\s+/etc/rc\.common\b", first):
            self.rc_common = self.facts.init_script = True
        if re.match(r"#!\S*(?:\s+\S*(?:sh|bash|dash|ksh))?(?:\s+-\w+)*\s+-\w*e", first):
            self.set_e = True  # #!/bin/sh -e
        stack = [(root, "")]
        errors = []
        while stack:
            n, owner = stack.pop()
            t = n.type
            if t == "comment":
                ln = self._lc(self._c(n.start_byte))[0]  # the file's line (see parse_bash)
                self.facts.comments[ln] = _txt(n)
                continue
            if t == "heredoc_body":
                continue
            if t == "command_name":
                self.referenced.setdefault(_txt(n), set()).add(owner)
            if t == "function_definition":
                name = n.child_by_field_name("name")
                if name is not None:
                    self.functions.setdefault(_txt(name), n)
            if t == "case_statement":
                v = _txt(n.child_by_field_name("value"))
                if v in ('"$1"', "$1", '"${1:-}"', "${1:-}", '"${1}"', "${1}"):
                    for it in n.named_children:
                        if it.type == "case_item":
                            vals = [_txt(c) for c in it.children_by_field_name("value")]
                            if any(v.strip("'\"") == "start" for v in vals):
                                self.facts.init_script = True
            if n.is_missing or (t == "heredoc_end" and n.start_byte == n.end_byte):
                errors.append(n)
            elif t == "ERROR" and not self._benign_error(n):
                errors.append(n)
            elif t == "command_name" and _txt(n) in CLOSER_WORDS and n.parent is not None:
                # tree-sitter-bash reads a stray `fi`/`done`/`}` as a command; bash stops there
                errors.append(n.parent)
            if t == "function_definition":
                nm = n.child_by_field_name("name")
                owner = _txt(nm) if nm is not None else owner
            stack.extend((c, owner) for c in reversed(n.children))
        self._errors(root, errors)

    def _benign_error(self, n) -> bool:
        # exec 9<>file: tree-sitter-bash 0.25 reads '<' then an ERROR holding '>'
        p = n.parent
        return p is not None and p.type == "file_redirect" and _txt(n) in (">", "<")

    def _errors(self, root, errors) -> None:
        if not errors:
            return
        size = max(1, root.end_byte)
        broken = None
        for n in errors:
            if n.is_missing or n.type == "heredoc_end":
                broken = broken or n
                continue
            kids = [c for c in n.children if c.type != "comment"]
            if n.end_byte >= size - 1 and (n.end_byte - n.start_byte) > 0:
                # an unterminated quote, substitution or brace runs to the end of the file; a
                # grammar gap on valid code (`[ "$a" \< "$b" ]`) does not open anything
                if any(c.type in OPENERS for c in kids) or _txt(n)[:1] in ("'", '"', "`"):
                    broken = broken or n
                elif any(c.type == "ERROR" and _txt(c)[:1] in ("'", '"', "`") for c in kids):
                    broken = broken or n
            if n.type == "command" or (kids and kids[0].type in CLOSER_WORDS):
                broken = broken or n  # a stray `fi`/`done`/`esac`: bash stops there
        if broken is None and _looks_foreign(self.text):
            broken = errors[0]
        if broken is None:
            return
        first = min(errors, key=lambda n: n.start_byte)
        end = self._shell_ends_at(root)
        if end is not None:
            # `exec tclsh "$0"` / `exit 0` at the top level: the shell never reads what follows
            # (a polyglot's other language, a self-extracting archive's payload)
            self.cut = self._c(end)
            return
        if _RUNS_OTHER_SCRIPT.match(self.text):
            # `#!/bin/sh /usr/share/dpatch/dpatch-run`: the shell runs that script with this
            # file as its argument; what the script does not source may be data (a patch)
            self.cut = self._c(first.start_byte)
            return
        if _bash_accepts(self.src, self._is_bats()):
            # a tree-sitter-bash gap on code bash reads (`"${v:-a;b}"`): read on as valid code
            return
        quote = None
        if not broken.is_missing and broken.type == "ERROR":
            for c in broken.children:
                if c.type in ('"', "'", "`", "string_content", "raw_string"):
                    quote = c
                    break
                if c.type == "ERROR" and _txt(c)[:1] in ("'", '"', "`"):
                    quote = c
                    break
        if quote is not None and broken is first:
            first = quote
        if broken.type == "heredoc_end":
            first = broken.parent or broken
        if broken.is_missing:
            # point at the construct left open
            node = broken.parent or broken
            first = node if node.start_byte < first.start_byte else first
        what = "cannot be read as shell"
        if quote is not None:
            what = "has an unterminated quote"
        elif broken.type == "heredoc_end":
            what = "has an unterminated here-doc"
        elif broken.is_missing:
            what = f"lacks a closing `{broken.type}`"
        if broken.type == "command":
            first = broken
            what = f"has an unexpected `{_txt(broken.child_by_field_name('name'))}`"
        elif broken.type == "ERROR" and broken.children and broken.children[0].type in CLOSER_WORDS:
            first = broken
            what = f"has an unexpected `{broken.children[0].type}`"
        self.facts.parse_errors.append(
            ParseError(
                self.span(first), f"the file {what} here; the rest is read as far as possible"
            )
        )
        # bash never runs what follows: facts from there on would be guesses
        self.cut = self._c(first.start_byte)

    def _is_bats(self) -> bool:
        return self.facts.path.endswith(".bats") or "bats" in self.text.split("\n", 1)[0]

    def _shell_ends_at(self, root) -> int | None:
        """End of the first top-level statement after which the shell stops reading the file
        (`exit`, `exec CMD`, an if whose every branch ends so), when the file up to there is
        readable shell; None otherwise."""
        stmts = []
        for node, _bg in self.statements(root):
            if node.type == "ERROR":
                # tree-sitter-bash wraps the statements before a later error in the ERROR
                stmts.extend(
                    c
                    for c in node.named_children
                    if c.type in ("command", "redirected_statement", "if_statement")
                )
            else:
                stmts.append(node)
        for node in stmts:
            if self._ends_shell(node, 0):
                end = node.end_byte
                head = self.src[:end]
                if not _parser().parse(head).root_node.has_error or _bash_accepts(head):
                    return end
                return None
        return None

    def _ends_shell(self, node, depth: int) -> bool:
        if depth > 4:
            return False
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "command":
            name = self.cmd_name(node)
            if name == "exit":
                return True
            if name == "exec":
                args = self.cmd_args(node)
                return bool(args) and not _txt(args[0]).startswith("{")
            return False
        if node.type == "if_statement":
            _conds, body, other = self._if_parts(node)
            if not body or other is None or not self._ends_shell(body[-1], depth + 1):
                return False
            while other is not None and other.type == "elif_clause":
                _c2, b2, o2 = self._if_parts(other)
                if not b2 or not self._ends_shell(b2[-1], depth + 1):
                    return False
                other = o2
            if other is None:
                return False
            stmts = self.statements(other)
            return bool(stmts) and self._ends_shell(stmts[-1][0], depth + 1)
        return False
