"""YAML through tree-sitter-yaml into a small tree with exact lines.

Chosen over ruamel.yaml by measurement (see the issue #15 report): the same key lines on real
workflows and CronJobs, ~10x faster, and an ERROR node at the first unreadable line instead of
an exception.  Helm templates are read with their actions masked: an action alone on its line
is blanked (``{{- if }}``, ``{{- end }}``, ``{{ include ... | nindent 4 }}``: the last kind may
insert keys, so the mapping around it is marked ``open``), an inline action becomes a
placeholder of the same length, whose value is unknown (``templated``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACTION = re.compile(r"\{\{.*?\}\}", re.S)
_CONTROL = re.compile(r"^\{\{-?\s*(if|else|end|range|with|define|/\*|-?\s*/\*)")
TEMPLATE_MARK = "TPL_"


class Node:
    """A mapping, sequence or scalar.  A mapping's pairs and a sequence's items are built on
    first use (a CronJob's reader looks at a few keys of a large document)."""

    __slots__ = ("kind", "line", "col", "text", "end_line", "raw", "_pairs", "_items", "_open")
    __slots__ += ("_todo",)

    def __init__(self, kind: str, line: int, col: int, text: str = "") -> None:
        self.kind = kind  # "map" | "seq" | "scalar"
        self.line = line  # 1-based
        self.col = col  # 1-based (characters)
        self.text = text  # scalar value (decoded)
        self.end_line = 0
        self.raw = ""  # the source text of a scalar
        self._pairs: dict[str, Pair] = {}
        self._items: list[Node] = []
        self._open = False  # a template action may insert keys here
        self._todo: tuple | None = None  # (builder, tree-sitter node) still to read

    def _expand(self) -> None:
        builder, n = self._todo
        self._todo = None
        builder.fill(self, n)

    @property
    def pairs(self) -> dict[str, Pair]:
        if self._todo is not None:
            self._expand()
        return self._pairs

    @property
    def items(self) -> list[Node]:
        if self._todo is not None:
            self._expand()
        return self._items

    @property
    def open(self) -> bool:
        if self._todo is not None:
            self._expand()
        return self._open

    @open.setter
    def open(self, value: bool) -> None:
        self._open = value

    @property
    def templated(self) -> bool:
        return self.kind == "scalar" and (TEMPLATE_MARK in self.text or "${{" in self.text)

    def get(self, key: str) -> Node | None:
        p = self.pairs.get(key)
        return p.value if p else None

    def path(self, *keys: str) -> Node | None:
        n: Node | None = self
        for k in keys:
            if n is None or n.kind != "map":
                return None
            n = n.get(k)
        return n


@dataclass
class Pair:
    key: str
    line: int
    col: int
    value: Node


@dataclass
class Doc:
    root: Node | None
    errors: list[tuple[int, int, str]]


def mask_templates(text: str) -> tuple[str, set[int]]:
    """The text with Go-template actions masked (same length, same lines) and the lines of
    actions that may insert content."""
    if "{{" not in text:
        return text, set()
    inserts: set[int] = set()
    inserting: set[int] = set()  # lines on which an action that may insert content starts
    indents: set[int] = set()  # offsets of actions that insert an indented block
    pieces = []
    last = 0
    line = 1
    for m in _ACTION.finditer(text):
        action = m.group(0)
        line += text.count("\n", last, m.start())
        if not _CONTROL.match(action):
            inserting.add(line)
        if "indent" in action:
            indents.add(m.end())
        pieces.append(text[last : m.start()])
        pieces.append(_NOT_NEWLINE.sub("\x01", action) if "\n" in action else "\x01" * len(action))
        line += action.count("\n")
        last = m.end()
    pieces.append(text[last:])
    out = []
    offset = 0
    for no, line_text in enumerate("".join(pieces).split("\n"), 1):
        if "\x01" not in line_text:
            out.append(line_text)
        elif not line_text.replace("\x01", "").strip():
            if no in inserting:
                inserts.add(no)
            out.append("")  # an empty line: spaces could break a block scalar
        elif line_text.endswith("\x01") and offset + len(line_text) in indents:
            # `key: {{ include ... | nindent 4 }}`: the action puts a block under the key
            inserts.add(no)
            body = line_text.rstrip("\x01")
            out.append(_MASKED.sub(_placeholder, body) + " " * (len(line_text) - len(body)))
        else:
            out.append(_MASKED.sub(_placeholder, line_text))
        offset += len(line_text) + 1
    return "\n".join(out), inserts


_NOT_NEWLINE = re.compile(r"[^\n]")
_MASKED = re.compile("\x01+")


def _placeholder(m: re.Match) -> str:
    return (TEMPLATE_MARK + "_" * len(m.group(0)))[: len(m.group(0))]


def _parser():
    from ..frontends.treesitter import parser

    return parser("yaml")  # the project's one tree-sitter layer (cached per process)


_ANCHOR = re.compile(rb"(?:^|[\s\[{,])&[^\s&]")


class _Builder:
    def __init__(self, data: bytes, inserts: set[int]) -> None:
        self.data = data
        self.lines = data.split(b"\n")
        self.anchors: dict[str, Node] = {}
        self.inserts = inserts
        self.ascii = data.isascii()  # then a byte column is the character column
        # an alias must find its anchor already read: with anchors, read everything now
        self.lazy = _ANCHOR.search(data) is None

    def col(self, point) -> int:
        row, c = point
        if self.ascii:
            return c + 1
        line = self.lines[row] if row < len(self.lines) else b""
        return len(line[:c].decode("utf-8", "replace")) + 1

    def node(self, n) -> Node:
        t = n.type
        if t in ("block_node", "flow_node"):
            anchor = None
            inner = None
            for c in n.named_children:
                if c.type == "anchor":
                    anchor = self.text(c)[1:]
                elif c.type == "tag" or c.type == "comment":
                    continue
                else:
                    inner = c
            res = self.node(inner) if inner is not None else self.scalar(n, "")
            if anchor:
                self.anchors[anchor] = res
            return res
        if t == "alias":
            target = self.anchors.get(self.text(n)[1:])
            return target if target is not None else self.scalar(n, TEMPLATE_MARK)
        if t in ("block_mapping", "flow_mapping", "block_sequence", "flow_sequence"):
            kind = "map" if t.endswith("mapping") else "seq"
            m = Node(kind, n.start_point[0] + 1, self.col(n.start_point))
            m.end_line = n.end_point[0] + 1
            m._todo = (self, n)
            if not self.lazy:
                m._expand()
            return m
        return self.scalar(n, self.decode_scalar(n))

    def fill(self, m: Node, n) -> None:
        """Read the pairs of a mapping or the items of a sequence."""
        if m.kind == "map":
            children: list[tuple[int, int]] = []
            for c in n.named_children:
                if c.type in ("block_mapping_pair", "flow_pair"):
                    self.pair(m, c, children)
                elif c.type == "flow_node":  # {a, b}: keys without values
                    k = self.node(c)
                    m._pairs[k.text] = Pair(k.text, k.line, k.col, self.scalar(c, ""))
            lo, hi = m.line, m.end_line + 1
            for ln in self.inserts:
                if lo <= ln <= hi and not any(a <= ln <= b for a, b in children):
                    m._open = True
            return
        for c in n.named_children:
            if c.type == "block_sequence_item":
                kids = [k for k in c.named_children if k.type != "comment"]
                m._items.append(self.node(kids[0]) if kids else self.scalar(c, ""))
            elif c.type == "flow_node":
                m._items.append(self.node(c))

    def pair(self, m: Node, c, children: list) -> None:
        key = c.child_by_field_name("key")
        value = c.child_by_field_name("value")
        kn = self.node(key) if key is not None else None
        kname = kn.text if kn is not None and kn.kind == "scalar" else ""
        v = self.node(value) if value is not None else self.scalar(c, "")
        if value is not None and value.type == "block_node":
            children.append((value.start_point[0] + 1, value.end_point[0] + 1))
            if v.kind == "map" and any(
                c.start_point[0] < ln - 1 < v.line - 1 for ln in self.inserts
            ):
                v.open = True  # `key:` then `{{ include ... | nindent }}` then more keys
        if kname == "<<":  # merge keys: the merged maps' pairs, never overriding
            for src in v.items if v.kind == "seq" else [v]:
                for k, p in src.pairs.items():
                    m._pairs.setdefault(k, p)
            return
        line, col = (kn.line, kn.col) if kn is not None else (c.start_point[0] + 1, 1)
        m._pairs[kname] = Pair(kname, line, col, v)

    def scalar(self, n, text: str) -> Node:
        s = Node("scalar", n.start_point[0] + 1, self.col(n.start_point), text=text)
        s.raw = self.text(n)
        s.end_line = n.end_point[0] + 1
        return s

    def text(self, n) -> str:
        """A node's source text (a slice of the bytes parsed: much cheaper than tree-sitter's
        ``Node.text`` on a tree's first use)."""
        return self.data[n.start_byte : n.end_byte].decode("utf-8", "replace")

    def decode_scalar(self, n) -> str:
        raw = self.text(n)
        t = n.type
        if t == "plain_scalar":
            return " ".join(p.strip() for p in raw.split("\n"))
        if t == "single_quote_scalar":
            return _fold(raw[1:-1]).replace("''", "'")
        if t == "double_quote_scalar":
            return _unescape(_fold(raw[1:-1]))
        if t == "block_scalar":
            return _block(raw)
        return raw


def _fold(s: str) -> str:
    return " ".join(p.strip() for p in s.split("\n")) if "\n" in s else s


_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0", "r": "\r"}


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESC.get(m.group(1), m.group(0)), s)


def _block(raw: str) -> str:
    head, _, body = raw.partition("\n")
    lines = body.split("\n")
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()]
    cut = min(indents) if indents else 0
    m = re.search(r"[1-9]", head)
    if m:
        cut = min(cut, int(m.group(0))) if indents else cut
    lines = [ln[cut:] for ln in lines]
    if head.lstrip().startswith(">"):
        return " ".join(ln for ln in lines if ln.strip()) + "\n"
    return "\n".join(lines).rstrip("\n") + "\n"


def _first_error(root) -> tuple[int, int, str] | None:
    stack = [root]
    best = None
    while stack:
        n = stack.pop()
        if not n.has_error:
            continue
        if n.type == "ERROR" or n.is_missing:
            p = n.start_point
            if best is None or p < best[:2]:
                what = f"missing {n.type}" if n.is_missing else "unexpected text"
                best = (p[0], p[1], what)
            continue
        stack.extend(n.children)
    if best is None:
        return None
    return best[0] + 1, best[1] + 1, best[2]


def parse_yaml(text: str, templates: bool = True) -> list[Doc]:
    """The documents of ``text`` (Helm actions masked when ``templates``; a workflow's
    ``${{ }}`` is plain YAML).  A file that does not parse, or nests too deeply for the
    parser (:mod:`lockcheck.definitions.yamldepth`), gives one Doc with the first unreadable
    line in ``errors``."""
    masked, inserts = mask_templates(text) if templates else (text, set())
    from .yamldepth import MAX_DEPTH, too_deep

    deep = too_deep(masked)
    if deep is not None:  # tree-sitter-yaml would die on it (see yamldepth)
        what = f"YAML nested too deeply to read (more than {MAX_DEPTH} collections deep)"
        return [Doc(None, [(deep[0], deep[1], what)])]
    from ..frontends.treesitter import source_bytes

    data = source_bytes(masked)
    tree = _parser().parse(data)
    err = _first_error(tree.root_node)
    if err is not None:
        b = _Builder(data, inserts)
        line, col_b, what = err
        col = b.col((line - 1, col_b - 1))
        return [Doc(None, [(line, col, f"YAML does not parse: {what}")])]
    docs = []
    for d in tree.root_node.named_children:
        if d.type != "document":
            continue
        b = _Builder(data, inserts)
        kids = [c for c in d.named_children if c.type in ("block_node", "flow_node")]
        docs.append(Doc(b.node(kids[0]) if kids else None, []))
    return docs


_COMMENT = re.compile(r"(?:^|\s)(#.*)$")


def comments(text: str) -> dict[int, str]:
    """Line -> the ``#`` comment on it (a YAML comment starts at ``#`` after a space)."""
    out = {}
    for i, line in enumerate(text.split("\n"), 1):
        m = _COMMENT.search(line) if "#" in line else None
        if m:
            out[i] = m.group(1)
    return out
