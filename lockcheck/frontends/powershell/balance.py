"""PowerShell that is not readable at all: an unterminated string, here-string or block
comment, or an unbalanced brace, parenthesis or bracket (RULES.md's LCK000).

tree-sitter-powershell rejects much valid PowerShell (see :meth:`.syntax.Tree.parse_errors`),
so LCK000 is not taken from its ERROR nodes.  This one pass over the text follows only what
PowerShell's tokenizer agrees on in every mode (quotes, here-strings, comments, escapes and
the three bracket pairs) and reports the first construct left open or closed twice.  Linear:
each character is looked at once.
"""

from __future__ import annotations

SINGLE = "'\u2018\u2019\u201a\u201b"  # PowerShell accepts the typographic quotes too
DOUBLE = '"\u201c\u201d\u201e'
OPEN = {"{": "}", "(": ")", "[": "]"}
CLOSE = {v: k for k, v in OPEN.items()}
_COMMENT_AFTER = set(" \t\r\n;{}()|&,=")


def first_unreadable(text: str) -> tuple[int, str] | None:
    """``(offset, reason)`` of the first construct that leaves the file unreadable, or None."""
    n = len(text)
    i = 0
    stack: list[tuple[str, int]] = []  # open brackets; "$(" inside a string is "s("
    while i < n:
        c = text[i]
        in_string = bool(stack) and stack[-1][0] == '"'
        if in_string:
            if c == "`":
                i += 2
                continue
            if c in DOUBLE:
                if i + 1 < n and text[i + 1] in DOUBLE:
                    i += 2  # "" is a quote inside the string
                    continue
                stack.pop()
                i += 1
                continue
            if c == "$" and i + 1 < n and text[i + 1] == "(":
                stack.append(("(", i + 1))
                i += 2
                continue
            i += 1
            continue
        if c == "`":
            i += 2  # an escaped character (a line continuation too)
            continue
        if c == "#" and (i == 0 or text[i - 1] in _COMMENT_AFTER):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "<" and text.startswith("<#", i):
            j = text.find("#>", i + 2)
            if j < 0:
                return i, "unterminated block comment `<#`"
            i = j + 2
            continue
        if c == "@" and i + 1 < n and (text[i + 1] in SINGLE or text[i + 1] in DOUBLE):
            end = _here_string_end(text, i)
            if end is not None:
                if end < 0:
                    return i, "unterminated here-string"
                i = end
                continue
        if c in SINGLE:
            j = i + 1
            while j < n:
                if text[j] in SINGLE:
                    if j + 1 < n and text[j + 1] in SINGLE:
                        j += 2  # '' is a quote inside the string
                        continue
                    break
                j += 1
            if j >= n:
                return i, "unterminated string"
            i = j + 1
            continue
        if c in DOUBLE:
            stack.append(('"', i))
            i += 1
            continue
        if c == "$" and text.startswith("${", i):
            j = text.find("}", i + 2)
            if j < 0:
                return i, "unterminated variable name `${`"
            i = j + 1
            continue
        if c in OPEN:
            stack.append((c, i))
        elif c in CLOSE:
            if not stack or stack[-1][0] != CLOSE[c]:
                return i, f"unbalanced `{c}`"
            stack.pop()
        i += 1
    if stack:
        kind, at = stack[-1]
        if kind == '"':
            return at, "unterminated string"
        return at, f"`{kind}` is never closed"
    return None


def _here_string_end(text: str, i: int) -> int | None:
    """After ``@"``/``@'`` ending its line: the offset past the closing ``"@``/``'@`` at the
    start of a line, -1 when there is none, None when this is no here-string."""
    j = i + 2
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == "\r":
        j += 1
    if j < len(text) and text[j] != "\n":
        return None  # `@'x'` is not a here-string opener
    quotes = SINGLE if text[i + 1] in SINGLE else DOUBLE
    pos = j
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return -1
        k = nl + 1
        if k + 1 < len(text) and text[k] in quotes and text[k + 1] == "@":
            return k + 2
        pos = k
