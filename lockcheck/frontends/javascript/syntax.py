"""Stage 1: the syntax tree of a JavaScript/TypeScript file and the helpers every later stage
reads it with (calls, arguments, strings, enclosing functions and statements, comments)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...hints import Any
from ...model import ParseError, Span
from .. import treesitter
from ..treesitter import descendants, within  # noqa: F401 - re-exported to the stages

TYPESCRIPT_EXTENSIONS = (".ts", ".mts", ".cts")
FUNCTIONS = {
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
}
# expressions that only wrap another one: (x), await x, x!, x as T, <T>x, x satisfies T
WRAPPERS = {
    "parenthesized_expression",
    "await_expression",
    "non_null_expression",
    "as_expression",
    "type_assertion",
    "satisfies_expression",
}
# a file's age: fs.Stats times (``stat.mtimeMs``, ``.mtime.getTime()``, ``.ctime``)
TIMES = re.compile(r"\.(?:mtime|ctime|birthtime)(?:Ms)?\b")


class Tree:
    """One parsed file: the root, the text and position mapping, comments."""

    def __init__(self, path: str, text: str) -> None:
        grammar = "typescript" if path.lower().endswith(TYPESCRIPT_EXTENSIONS) else "javascript"
        self.path = path
        self.text = text
        src = treesitter.source_bytes(text)
        self.root = treesitter.parser(grammar).parse(src).root_node
        self.offsets = treesitter.Offsets(text, src)
        self._nodes: list[Any] | None = None
        self._calls: list[Any] | None = None

    @property
    def nodes(self) -> list[Any]:
        """Every node, in document order (built on first use: a file read only for its
        LCK000 never needs them)."""
        if self._nodes is None:
            self._nodes = list(treesitter.walk(self.root))
        return self._nodes

    @property
    def calls(self) -> list[Any]:
        if self._calls is None:
            kinds = ("call_expression", "new_expression")
            self._calls = [n for n in self.nodes if n.type in kinds]
        return self._calls

    # -- positions ---------------------------------------------------------------------------
    def span(self, node: Any) -> Span:
        return self.offsets.span(node)

    def parse_errors(self) -> list[ParseError]:
        err = treesitter.first_error(self.root)
        if err is None:
            return []
        line = self.offsets.line_col(self.offsets.char(err.start_byte))[0]
        return [ParseError(self.offsets.line_span(line), "JavaScript syntax error: not readable")]

    def comments(self) -> dict[int, str]:
        """Line comments (``// ...``), stripped of ``//``; block comments carry no directives."""
        out: dict[int, str] = {}
        for n in self.nodes:
            if n.type == "comment":
                t = treesitter.text_of(n)
                if t.startswith("//"):
                    line = n.start_point[0] + 1
                    out[line] = (out[line] + " " if line in out else "") + t[2:]
        return out


def text(node: Any) -> str:
    return treesitter.text_of(node)


def unwrap(node: Any) -> Any:
    while node is not None and node.type in WRAPPERS:
        inner = [c for c in node.named_children if c.type not in ("type_annotation",)]
        if not inner:
            break
        node = inner[-1] if node.type == "type_assertion" else inner[0]
    return node


def args(call: Any) -> list[Any]:
    a = call.child_by_field_name("arguments")
    if a is None:
        return []
    return [c for c in a.named_children if c.type != "comment"]


def arg(call: Any, i: int) -> Any:
    a = args(call)
    return unwrap(a[i]) if i < len(a) else None


def string_value(node: Any) -> str | None:
    """The value of a string literal or a template literal without substitutions."""
    node = unwrap(node)
    if node is None:
        return None
    if node.type == "string":
        return "".join(text(c) for c in node.named_children if c.type != "escape_sequence")
    if node.type == "template_string" and not any(
        c.type == "template_substitution" for c in node.named_children
    ):
        return "".join(text(c) for c in node.named_children if c.type == "string_fragment")
    return None


def object_entries(node: Any) -> dict[str, Any]:
    """``{flag: "wx", recursive: true}`` -> {"flag": <node>, ...}."""
    out: dict[str, Any] = {}
    node = unwrap(node)
    if node is None or node.type != "object":
        return out
    for c in node.named_children:
        if c.type == "pair":
            k, v = c.child_by_field_name("key"), c.child_by_field_name("value")
            if k is not None and v is not None:
                out[string_value(k) or text(k)] = unwrap(v)
        elif c.type == "shorthand_property_identifier":
            out[text(c)] = c
    return out


def ancestors(node: Any) -> Iterator[Any]:
    n = node.parent
    while n is not None:
        yield n
        n = n.parent


def function_of(node: Any) -> Any:
    for a in ancestors(node):
        if a.type in FUNCTIONS:
            return a
    return None


def function_name(func: Any) -> str | None:
    """The name a function is called by: its declaration's, or the variable/property it is
    assigned to (``const f = () => ...``, ``exports.f = function ...``)."""
    if func is None:
        return None
    name = func.child_by_field_name("name")
    if name is not None:
        return text(name)
    p = func.parent
    if p is not None and p.type == "variable_declarator":
        n = p.child_by_field_name("name")
        return text(n) if n is not None and n.type == "identifier" else None
    if p is not None and p.type in ("assignment_expression", "pair"):
        left = p.child_by_field_name("left") or p.child_by_field_name("key")
        if left is not None:
            return text(left).rsplit(".", 1)[-1]
    return None


def statement_of(node: Any) -> Any:
    """The statement that holds ``node`` (a direct child of a block or the program)."""
    n = node
    while n.parent is not None and n.parent.type not in (
        "statement_block",
        "program",
        "switch_case",
        "else_clause",
    ):
        if n.parent.type == "if_statement" and n.parent.child_by_field_name("condition") != n:
            return n
        n = n.parent
    return n


def block_statements(block: Any) -> list[Any]:
    """A block's statements; a single statement body counts as a block of one."""
    if block is None:
        return []
    if block.type in ("statement_block", "program"):
        return [c for c in block.named_children if c.type != "comment"]
    if block.type == "else_clause":
        inner = [c for c in block.named_children if c.type != "comment"]
        return block_statements(inner[0]) if inner else []
    if block.type == "expression_statement" or block.type.endswith("statement"):
        return [block]
    return [block]


def following(stmt: Any) -> list[Any]:
    """The statements after ``stmt`` in its block."""
    p = stmt.parent
    if p is None:
        return []
    sibs = block_statements(p) if p.type in ("statement_block", "program") else []
    for i, s in enumerate(sibs):
        if s == stmt:
            return sibs[i + 1 :]
    return []
