"""Stage 1: the syntax tree of a PowerShell file (tree-sitter-powershell) and the helpers the
later stages read it with: the single-child expression wrappers unwrapped, commands with
their parameters (splatted literal hashtables read like the parameters they hold), .NET
calls, comments."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextvars import ContextVar

from ...hints import Any
from ...model import ParseError, Span
from .. import treesitter
from ..treesitter import descendants, within  # noqa: F401 - re-exported to the stages
from . import balance, premask

# expression layers the grammar wraps around every value
WRAPPERS = {
    "pipeline",
    "pipeline_chain",
    "logical_expression",
    "bitwise_expression",
    "comparison_expression",
    "additive_expression",
    "multiplicative_expression",
    "format_expression",
    "range_expression",
    "array_literal_expression",
    "unary_expression",
    "argument_expression",
    "logical_argument_expression",
    "bitwise_argument_expression",
    "comparison_argument_expression",
    "additive_argument_expression",
    "multiplicative_argument_expression",
    "format_argument_expression",
    "range_argument_expression",
    "parenthesized_expression",
    "sub_expression",
    "left_assignment_expression",
}
# a class method is a function of its own: its `return` goes back to the call
FUNCTIONS = {"function_statement", "class_method_definition"}
SCOPES = FUNCTIONS | {"script_block_expression"}
# parameters that take no value
SWITCHES = {"force", "append", "passthru", "noclobber", "whatif", "confirm", "leaf", "parent"}
# a parameter's own aliases (``Remove-Item -LP``)
ALIASES = {"literalpath": ("lp", "pspath")}
SWITCHES |= {"recurse", "isabsolute", "resolve", "raw", "nonewline", "asjob", "wait"}


# the file's own bytes while a masked copy of them is parsed (premask): text() reads these
_ORIGINAL: ContextVar[tuple[bytes, bytes] | None] = ContextVar("powershell_original", default=None)


_SURROGATE = re.compile("[\udc80-\udcff]")


class Tree:
    def __init__(self, text: str) -> None:
        self.text = text
        src = treesitter.source_bytes(text)
        parsed, self.root = premask.parse(treesitter.parser("powershell"), src)
        _ORIGINAL.set((parsed, src) if parsed is not src else None)
        self.offsets = treesitter.Offsets(text, src)
        self.nodes = list(treesitter.walk(self.root))
        self.commands = [n for n in self.nodes if n.type == "command"]
        self.invocations = [n for n in self.nodes if n.type == "invokation_expression"]

    def span(self, node: Any) -> Span:
        return self.offsets.span(node)

    def char(self, b: int) -> int:
        return self.offsets.char(b)

    def parse_errors(self) -> list[ParseError]:
        """LCK000 for PowerShell that is not readable at all (an unterminated string,
        here-string or block comment, an unbalanced bracket: :mod:`.balance`), not for an ERROR
        node.  tree-sitter-powershell 0.26.4 (the newest on PyPI) rejects much valid
        PowerShell: of the 2,047 .ps1/.psm1 files of the fetched public repositories, 717
        (35.0%) have an ERROR or MISSING node as parsed, 442 (21.6%) after :mod:`.premask`, all
        of those read valid PowerShell.  The balance test flags 0.5% of 2,414 real files, each
        truly unbalanced or unterminated.  A file that is not UTF-8 (a legacy code page, whose
        trail bytes can be a backtick or a quote) is not judged: its tokens are not known."""
        if "\ufffd" in self.text or _SURROGATE.search(self.text):
            return []
        found = balance.first_unreadable(self.text)
        if found is None:
            return []
        at, reason = found
        line = self.offsets.line_col(at)[0]
        return [ParseError(self.offsets.line_span(line), f"PowerShell syntax error: {reason}")]

    def comments(self) -> dict[int, str]:
        """``#`` comments as written; ``<# ... #>`` block comments carry no directives."""
        out: dict[int, str] = {}
        for n in self.nodes:
            if n.type == "comment":
                t = text(n)
                if t.startswith("#"):
                    out[n.start_point[0] + 1] = t
        return out


def text(node: Any) -> str:
    """The source of ``node`` as the file has it (not as masked for the grammar)."""
    pair = _ORIGINAL.get()
    if pair is not None:
        s = node.start_byte
        original = pair[1][s : node.end_byte]
        if pair[0][s : s + 1] == b"-" and pair[1][s - 2 : s + 1] in premask.DASHES:
            return "-" + original[1:].decode("utf-8", "surrogateescape")  # `–Force`
        return original.decode("utf-8", "surrogateescape")
    return treesitter.text_of(node)


def raw(node: Any) -> bytes:
    """The bytes of ``node`` as the file has them."""
    pair = _ORIGINAL.get()
    return pair[1][node.start_byte : node.end_byte] if pair is not None else node.text


def unwrap(node: Any) -> Any:
    while node is not None and node.type in WRAPPERS:
        named = [c for c in node.named_children if c.type != "comment"]
        if len(named) != 1:
            break
        node = named[0]
    return node


def var_name(node: Any) -> str | None:
    """``$Lock`` -> "lock", ``${env:OneDrive}`` -> "env:onedrive" (lower case), else None."""
    node = unwrap(node)
    if node is None or node.type != "variable":
        return None
    t = text(node).lstrip("$@")
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    return t.lower()


def ancestors(node: Any) -> Iterator[Any]:
    n = node.parent
    while n is not None:
        yield n
        n = n.parent


def scope_of(node: Any) -> Any:
    """The function or class method ``node`` is in (None: the script)."""
    for a in ancestors(node):
        if a.type in FUNCTIONS:
            return a
    return None


def function_name(func: Any) -> str | None:
    if func is None:
        return None
    for c in func.named_children:
        if c.type == "function_name":
            return text(c).lower()
        if c.type == "simple_name" and func.type in ("class_method_definition", "class_statement"):
            return text(c).lower()
    return None


def calls(tree: Tree, func: Any) -> list[Any]:
    """The commands that call the function ``func`` (``Get-Lock -Path P``) or, for a class
    method, the invocations of a method of that name (``$lock.TryAcquire()``), outside it."""
    name = function_name(func)
    if name is None:
        return []
    if func.type == "class_method_definition":
        return [
            inv
            for inv in tree.invocations
            if invocation_parts(inv)[1] == name and not within(inv, func)
        ]
    return [c for c in tree.commands if command_name(c) == name]


def statements(block: Any) -> list[Any]:
    """The statements of a ``statement_block`` (or a ``script_block``)."""
    if block is None:
        return []
    for n in treesitter.walk(block):
        if n.type == "statement_list":
            return [c for c in n.named_children if c.type not in ("comment", "empty_statement")]
    return []


def block_of(clause: Any) -> Any:
    for c in clause.named_children:
        if c.type in ("statement_block", "script_block", "script_block_expression"):
            return c
    return None


def command_name(cmd: Any) -> str:
    n = cmd.child_by_field_name("command_name")
    return text(n).lower() if n is not None else ""


class Command:
    """A command's parameters (lower-case names, without the dash) and positional values."""

    def __init__(self, cmd: Any, splat: Any = None) -> None:
        self.node = cmd
        self.name = command_name(cmd)
        self.params: dict[str, Any] = {}
        self.param_nodes: dict[str, Any] = {}
        self.positional: list[Any] = []
        self.splats: list[str] = []
        elements = cmd.child_by_field_name("command_elements")
        items = (
            []
            if elements is None
            else [
                c
                for c in elements.named_children
                if c.type not in ("command_argument_sep", "comment")
            ]
        )
        i = 0
        while i < len(items):
            it = items[i]
            if it.type == "command_parameter":
                raw = text(it)[1:]
                name, colon, value = raw.partition(":")
                name = name.lower()
                self.param_nodes[name] = it
                if colon:
                    self.params[name] = value or (items[i + 1] if i + 1 < len(items) else True)
                    i += 1 if value else 2
                    continue
                nxt = items[i + 1] if i + 1 < len(items) else None
                if name in SWITCHES or nxt is None or nxt.type == "command_parameter":
                    self.params[name] = True
                    i += 1
                else:
                    self.params[name] = nxt
                    i += 2
                continue
            u = unwrap(it)
            if u is not None and u.type == "variable" and text(u).startswith("@"):
                self.splats.append(var_name(u) or "")
            elif it.type != "redirection" and it.type != "redirections":
                self.positional.append(it)
            i += 1

    def get(self, *names: str, position: int | None = None) -> Any:
        names += tuple(a for n in names for a in ALIASES.get(n, ()))
        for n in names:
            if n in self.params:
                return self.params[n]
        for n, v in self.params.items():  # unambiguous prefixes: -Path as -Pa, -EA
            if any(x.startswith(n) and len(n) >= 2 for x in names):
                return v
        if position is not None and position < len(self.positional):
            return self.positional[position]
        return None

    def has(self, *names: str) -> bool:
        return self.get(*names) is not None


def invocation_parts(inv: Any) -> tuple[str, str, list[Any]]:
    """``[IO.File]::Open(a, b)`` -> ("io.file", "open", [a, b]); ``$m.WaitOne(0)`` ->
    ("$m", "waitone", [0])."""
    target = ""
    member = ""
    args: list[Any] = []
    for c in inv.named_children:
        if c.type == "type_literal":
            target = type_name(c)
        elif c.type == "variable":
            target = text(c).lower()
        elif c.type == "member_name":
            member = text(c).lower()
        elif c.type == "argument_list":
            lst = [x for x in c.named_children if x.type == "argument_expression_list"]
            if lst:
                args = [x for x in lst[0].named_children if x.type not in (",", "comment")]
    return target, member, args


def type_name(node: Any) -> str:
    t = text(node).strip("[]").lower()
    return t.removeprefix("system.")


def string_value(node: Any) -> str | None:
    """The value of a string literal without expansions (or a bare word)."""
    node = unwrap(node)
    if node is None:
        return None
    if node.type == "string_literal":
        inner = node.named_children
        node = inner[0] if inner else node
    if node.type == "verbatim_string_characters":
        return text(node)[1:-1].replace("''", "'")
    if node.type == "expandable_string_literal" and not node.named_children:
        return text(node)[1:-1].replace('`"', '"')
    if node.type in ("generic_token", "command_argument"):
        return text(node)
    if node.type == "member_access":  # [IO.FileMode]::CreateNew
        names = [c for c in node.named_children if c.type == "member_name"]
        if names and any(c.type == "type_literal" for c in node.named_children):
            return text(names[-1])
    return None
