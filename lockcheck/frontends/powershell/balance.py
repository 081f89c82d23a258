"""PowerShell that is not readable at all: an unterminated string, here-string or block
comment, or an unbalanced brace, parenthesis or bracket (RULES.md's LCK000).

tree-sitter-powershell rejects much valid PowerShell (see :meth:`.syntax.Tree.parse_errors`),
so LCK000 is not taken from its ERROR nodes.  This one pass over the text follows only what
PowerShell's tokenizer agrees on in every mode (quotes, here-strings, comments, escapes and
the three bracket pairs; the `$( ... )` code inside an expandable string or here-string is
code, with its own strings and here-strings) and reports the first construct left open or
closed twice.  Linear: each character is looked at once.
"""

from __future__ import annotations

import re

SINGLE = "'\u2018\u2019\u201a\u201b"  # PowerShell accepts the typographic quotes too
DOUBLE = '"\u201c\u201d\u201e'
OPEN = {"{": "}", "(": ")", "[": "]"}
CLOSE = {v: k for k, v in OPEN.items()}
_COMMENT_AFTER = set(" \t\r\n;{}()|&,=")
# a line ends at LF, CRLF or a lone CR (PowerShell reads old Mac-style files too)
_EOL = re.compile(r"\r\n?|\n")
# the next character that can matter, in code and inside an expandable string: the rest are
# skipped in one regex step (the pass stays linear, without a Python step per character)
_IN_CODE = re.compile("[" + re.escape("`#<@$" + SINGLE + DOUBLE + "{}()[]") + "]")
_IN_STRING = re.compile("[" + re.escape("`$" + DOUBLE) + "]")


def first_unreadable(text: str) -> tuple[int, str] | None:
    """``(offset, reason)`` of the first construct that leaves the file unreadable, or None."""
    n = len(text)
    i = 0
    stack: list[tuple[str, int]] = []  # open brackets; "$(" inside a string is "s("
    while i < n:
        top = stack[-1][0] if stack else ""
        m = (_IN_STRING if top in ('"', '@"') else _IN_CODE).search(text, i)
        if m is None:
            break
        i = m.start()
        c = text[i]
        if top == '@"':  # an expandable here-string: text, `$( ... )` code, `"@` at a line start
            if c == "`":
                i += 2
            elif c in DOUBLE and text.startswith("@", i + 1) and (i == 0 or text[i - 1] in "\r\n"):
                stack.pop()
                i += 2
            elif c == "$" and text.startswith("(", i + 1):
                stack.append(("(", i + 1))
                i += 2
            else:
                i += 1
            continue
        in_string = top == '"'
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
            m = _EOL.search(text, i)
            i = n if m is None else m.start()
            continue
        if c == "<" and text.startswith("<#", i):
            j = text.find("#>", i + 2)
            if j < 0:
                return i, "unterminated block comment `<#`"
            i = j + 2
            continue
        if c == "@" and i + 1 < n and text[i + 1] in DOUBLE:
            body = _here_string_body(text, i)
            if body is not None:  # its `$( ... )` may hold code, strings, here-strings
                stack.append(('@"', i))
                i = body
                continue
        if c == "@" and i + 1 < n and text[i + 1] in SINGLE:
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
            j = _braced_name_end(text, i + 2)
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
        if kind == '@"':
            return at, "unterminated here-string"
        return at, f"`{kind}` is never closed"
    return None


def _braced_name_end(text: str, j: int) -> int:
    """The offset of the ``}`` that ends a ``${...}`` name begun before ``j``: a backtick
    escapes the next character, and `` `u{2195} `` is one escaped character; -1 if none."""
    n = len(text)
    while j < n:
        c = text[j]
        if c == "`":
            if text.startswith("u{", j + 1):
                k = text.find("}", j + 3)
                j = n if k < 0 else k + 1
            else:
                j += 2
            continue
        if c == "}":
            return j
        j += 1
    return -1


def _here_string_body(text: str, i: int) -> int | None:
    """After ``@"``/``@'`` ending its line: the offset of the body's first line; None when
    this is no here-string opener (``@'x'``)."""
    j = i + 2
    while j < len(text) and text[j] in " \t":
        j += 1
    m = _EOL.match(text, j)
    if m is None:
        return None if j < len(text) else j + 1
    return m.end()


def _here_string_end(text: str, i: int) -> int | None:
    """After ``@'`` ending its line (a verbatim here-string): the offset past the closing
    ``'@`` at the start of a line, -1 when there is none, None when this is no here-string."""
    k = _here_string_body(text, i)
    if k is None:
        return None
    while k < len(text):
        if k + 1 < len(text) and text[k] in SINGLE and text[k + 1] == "@":
            return k + 2
        m = _EOL.search(text, k)
        if m is None:
            break
        k = m.end()
    return -1
