"""Value and path resolution: assignments (the one environment of the walk), quoting,
parameter expansions, command substitutions whose value is known (``dirname``, ``basename``,
``mktemp``, ``id -u``...), within a bound of work per resolution.
"""

from __future__ import annotations

import re

from ...model import Part, PartKind, PathExpr
from .data import AGE_TEST, STATEMENT_SKIP, Pos, _Joined, _merge, _txt, _unescape_word

# bounds of static resolution (a hostile script must not make a value grow without end)
_VALUE_LIMIT = 4096  # PATH_MAX: a longer value names no file, it stays unknown

_RESOLVE_WORK = 16 * _VALUE_LIMIT  # nodes read and characters copied by one resolution

# text filters that keep a name derived from the script name derived from it alone
TEXT_FILTERS = {"sed", "tr", "cut", "awk", "head", "tail", "md5sum", "sha1sum", "sha256sum"}


class _TooMuchWork(Exception):
    """One resolution went past :data:`_RESOLVE_WORK`: its value stays unknown."""


def _value_size(parts) -> int:
    """Characters and parts of a resolved value (defaults included)."""
    return sum(
        1 + len(p.value) + (_value_size(p.default.parts) if p.default is not None else 0)
        for p in parts
    )


class Values:
    """Assignments and the resolution of words into :class:`PathExpr`."""

    # ------------------------------------------------------------------ assignments
    def _split_assignment(self, cmd) -> bool:
        """tree-sitter-bash reads X=/tmp/`cmd`.lock as a prefix assignment X=/tmp/ and a
        command named `cmd`.lock: rejoin them into one assignment."""
        kids = cmd.children
        if len(kids) != 2 or kids[0].type != "variable_assignment":
            return False
        a, n = kids
        if n.type != "command_name" or a.end_byte != n.start_byte:
            return False
        value = a.child_by_field_name("value")
        inner = n.named_children[0] if n.named_children else None
        if value is None or inner is None:
            return False
        name = _txt(a.child_by_field_name("name"))
        joined = _Joined(value, inner, self.src if self.offmap is None else self._sub_src)
        self.env[name] = self.resolve(joined).parts
        return True

    def assign(self, node, local: bool = False, pos: Pos | None = None) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        n = _txt(name)
        if name.type == "subscript":
            return
        if value is None:
            self.env[n] = ()
            return
        if value.type == "array":
            self.env[n] = None
            return
        self.keep_bg_pid(n, value)
        self._walk_substitutions(value, pos)
        parts = self.resolve(value).parts
        if (
            self.cond_depth > 0
            and all(p.kind is PartKind.LIT and not p.value for p in parts)
            and self.env.get(n)
        ):
            return  # `[ -n "$NO_LOCK" ] && LOCKFILE=""` switches a value off: keep the value
        self.env[n] = parts
        cmd = self.command_name_of_value(value)
        if cmd:
            self.cmdvars[n] = cmd
        else:
            self.cmdvars.pop(n, None)
        src = self.pid_source(value)
        if src is not False:
            self.pidvars[n] = src
        else:
            self.pidvars.pop(n, None)
        probe = self._liveness_output(value)
        if probe is not None:
            self.live_vars[n] = probe
        else:
            self.live_vars.pop(n, None)
        if AGE_TEST.search(_txt(value)):
            self.age_vars.add(n)  # `AGE=$(( $(date +%s) - $(stat -c %Y "$L") ))`
        else:
            self.age_vars.discard(n)

        # rc=$? after a tested acquire is handled by the sequence look-ahead

    def _is_flock(self, c) -> bool:
        if c.type == "redirected_statement":
            c = c.child_by_field_name("body") or c
        return c.type == "command" and self.unwrap(c)[0] == "flock"

    def _walk_substitutions(self, value, pos: Pos | None = None, flock_only=False) -> None:
        """Commands inside `$(...)` of an assignment run in a subshell: walk the ones that call
        this file's functions (so their parameters come from this call site) and flock.  When
        the value is one `$(flock ...)`, its status is the assignment's (``pos``)."""
        whole = value
        if whole.type == "string" and len(whole.named_children) == 1:
            whole = whole.named_children[0]
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type == "command_substitution":
                inner = [c for c in n.named_children if c.type not in STATEMENT_SKIP]
                calls = not flock_only and any(
                    c.type == "command" and self.cmd_name(c) in self.functions for c in inner
                )
                locks = any(self._is_flock(c) for c in inner)
                if (calls or locks) and len(self.subshells) < 8:
                    last = inner[-1] if inner else None
                    tested = (
                        pos is not None
                        and n is whole
                        and last is not None
                        and self._is_flock(last)
                        and (pos.tested or pos.tail or self._status_pos(pos) is not None)
                    )
                    self.subshells.append(Pos())
                    self.walk_seq([(c, False) for c in (inner[:-1] if tested else inner)], False)
                    self.subshells.pop()
                    if tested:
                        # the status of `x=$(flock ...)` is flock's: the branches are outside
                        self.stmt(last, pos)
                continue
            stack.extend(n.named_children)

    def declare(self, node) -> None:
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c)
            elif c.type == "variable_name":
                self.env.setdefault(_txt(c), ())

    def pid_source(self, value):
        """The file a PID value is read from: $(cat F), $(<F), $(head -n1 F); False if none."""
        node = value
        if node.type == "string":
            kids = [c for c in node.named_children]
            if len(kids) != 1:
                return False
            node = kids[0]
        if node.type != "command_substitution":
            return False
        inner = [c for c in node.named_children]
        if not inner:
            return False
        c = inner[0]
        if (
            c.type == "list"
            and [k.type for k in c.children if not k.is_named] == ["||"]
            and len(c.named_children) == 2
            and _txt(c.named_children[1]).split()[0] in ("echo", "printf", "true", ":")
        ):
            # `$(cat F 2>/dev/null || echo "")`: an empty default when F cannot be read
            c = c.named_children[0]
        if c.type == "file_redirect":
            dest = c.child_by_field_name("destination")
            return self.resolve(dest) if dest is not None else None
        if c.type == "redirected_statement":
            body = c.child_by_field_name("body")
            reds = [r for r in c.children if r.type == "file_redirect"]
            if (
                body is not None
                and body.type == "command"
                and self.cmd_name(body) in ("cat", "head", "tail", "tr")
            ):
                for r in reds:
                    info = self.redirect_info(r)
                    if info and info[1] == "<":
                        return self.resolve(info[2])
                c = body
            else:
                return False
        if c.type == "command" and self.cmd_name(c) in ("cat", "head", "tail"):
            ops = [
                a for a in self.cmd_args(c) if not _txt(a).startswith("-") and not _txt(a).isdigit()
            ]
            if ops:
                return self.resolve(ops[-1])
        return False

    # ------------------------------------------------------------------ path resolution
    def resolve(self, node) -> PathExpr:
        # each resolution may copy at most _RESOLVE_WORK characters and parts of stored values,
        # and a value longer than a path can be (PATH_MAX) stays unknown: `v=$v$v` repeated
        # would otherwise double the value on every line
        saved, self._budget = self._budget, _RESOLVE_WORK
        try:
            parts = _merge(self._parts(node, first=True, depth=0))
        except (RecursionError, _TooMuchWork):
            parts = None
        finally:
            self._budget = saved
        if parts is None or _value_size(parts) > _VALUE_LIMIT:
            parts = (Part(PartKind.UNKNOWN, _txt(node)),)
        return PathExpr(parts, _txt(node))

    def _charge(self, units: int) -> None:
        self._budget -= units
        if self._budget < 0:
            raise _TooMuchWork

    def _parts(self, node, first: bool, depth: int) -> list[Part]:
        parts = self._parts_raw(node, first, depth)
        if node is not None and any(p.kind is PartKind.UNKNOWN and not p.value for p in parts):
            # an unresolved part carries its source text: two different expressions differ,
            # the same expression is the same
            text = _txt(node)
            parts = [
                Part(PartKind.UNKNOWN, text) if p.kind is PartKind.UNKNOWN and not p.value else p
                for p in parts
            ]
        return parts

    def _parts_raw(self, node, first: bool, depth: int) -> list[Part]:
        if node is None:
            return [Part(PartKind.UNKNOWN)]
        self._charge(1)
        if depth > 20:
            return [Part(PartKind.UNKNOWN)]
        t = node.type
        if t in ("word", "number", "extglob_pattern", "regex"):
            s = _txt(node)
            if first and (s == "~" or s.startswith("~/")):
                return [Part(PartKind.HOME), Part(PartKind.LIT, _unescape_word(s[1:]))]
            return [Part(PartKind.LIT, _unescape_word(s))]
        if t == "raw_string":
            return [Part(PartKind.LIT, _txt(node)[1:-1])]
        if t == "ansi_c_string":
            return [Part(PartKind.LIT, _txt(node)[2:-1])]
        if t in ("string", "translated_string"):
            out: list[Part] = []
            for c in node.named_children:
                if c.type == "string_content":
                    out.append(Part(PartKind.LIT, _txt(c)))
                else:
                    out.extend(self._parts(c, False, depth + 1))
            if not node.named_children:
                out.append(Part(PartKind.LIT, ""))
            return out
        if t == "concatenation":
            out = []
            kids = list(node.children)
            carry = False
            for i, c in enumerate(kids):
                if carry:
                    carry = False
                    w = _txt(c)
                    m = re.match(r"[0-9]|[A-Za-z_]\w*", w)
                    if c.type == "word" and m:
                        out.extend(self._var(m.group(0), depth))
                        out.append(Part(PartKind.LIT, _unescape_word(w[m.end() :])))
                        continue
                if not c.is_named:
                    s = _txt(c)
                    if s == "$" and i + 1 < len(kids) and kids[i + 1].type == "word":
                        carry = True  # tree-sitter-bash splits `-$1.lock` into `$` and `1.lock`
                        continue
                    out.append(Part(PartKind.UNIQUE, "$") if s == "$$" else Part(PartKind.LIT, s))
                    continue
                out.extend(self._parts(c, first and i == 0, depth + 1))
            return out
        if t == "simple_expansion":
            kids = node.named_children
            if not kids:
                return [Part(PartKind.UNKNOWN)]
            return self._var(_txt(kids[0]), depth)
        if t == "expansion":
            return self._expansion(node, depth)
        if t == "command_substitution":
            return self._cmdsub(node, depth)
        return [Part(PartKind.UNKNOWN)]

    def _var(self, name: str, depth: int) -> list[Part]:
        if self.frames and name.isdigit() and name != "0":
            v = self.frames[-1].params.get(name)
            if v is None:
                return (
                    [Part(PartKind.UNKNOWN, "${" + name + "}")]
                    if self.frames[-1].params
                    else [Part(PartKind.ARG, name)]
                )
            self._charge(_value_size(v))
            return list(v)
        if name in ("$", "BASHPID", "RANDOM", "SRANDOM"):
            return [Part(PartKind.UNIQUE, name)]
        if name == "0":
            return [Part(PartKind.SCRIPT)]
        if name.isdigit() or name in ("@", "*"):
            return [Part(PartKind.ARG, name)]
        if name in ("?", "#", "!", "-", "_"):
            return [Part(PartKind.UNKNOWN, "${" + name + "}")]
        if name in self.env:
            v = self.env[name]
            if v is None:
                # a value known only at run time (read, a loop variable): `$f` and `${f}` are
                # one expression
                return [Part(PartKind.UNKNOWN, "${" + name + "}")]
            self._charge(_value_size(v))
            return list(v)
        late = self._late_value(name, depth) if self.in_trap else None
        if late is not None:
            return late
        if name == "HOME":
            return [Part(PartKind.HOME)]
        if name in ("USER", "LOGNAME", "UID", "EUID", "USERNAME"):
            return [Part(PartKind.USER, name)]
        if name == "PWD":
            return [Part(PartKind.CWD)]
        if name == "BASH_SOURCE":
            return [Part(PartKind.SCRIPT)]
        return [Part(PartKind.VAR, name)]

    def _late_value(self, name: str, depth: int) -> list[Part] | None:
        """A trap's handler runs when the run ends or is signalled, after the statements that
        follow the ``trap``: a variable still unset where the trap is installed (`trap
        cleanup INT TERM` first, `lock=/tmp/x.lock` below) has the value the script's last
        top-level assignment gives it."""
        if self._late is None:
            self._late = {}
            for n in self.root.named_children if self.root is not None else ():
                if n.type == "variable_assignment" and n.child_by_field_name("value"):
                    self._late[_txt(n.child_by_field_name("name"))] = n
        node = self._late.get(name)
        if node is None or depth > 8:
            return None
        self._late.pop(name)  # `x=$x.lock`: read once
        try:
            return self._parts(node.child_by_field_name("value"), True, depth + 1)
        finally:
            self._late[name] = node

    def _expansion(self, node, depth: int) -> list[Part]:
        name = None
        op = ""
        operand = []
        seen_name = False
        for c in node.children:
            if c.type in ("${", "}"):
                continue
            if not seen_name and c.type in ("variable_name", "special_variable_name"):
                name = _txt(c)
                seen_name = True
                continue
            if not seen_name and c.type == "subscript":
                nm = c.child_by_field_name("name")
                idx = _txt(c.child_by_field_name("index"))
                if nm is not None and _txt(nm) == "BASH_SOURCE" and idx in ("0", ""):
                    name = "0"
                else:
                    name = None
                seen_name = True
                continue
            if not seen_name:
                if c.type == "#":
                    return [Part(PartKind.UNKNOWN)]
                continue
            if not c.is_named:
                op += c.type
            else:
                operand.append(c)
        if name is None:
            return [Part(PartKind.UNKNOWN)]
        if not op:
            return self._var(name, depth)
        op = op.strip()
        if op in (":-", "-", ":=", "="):
            params = self.frames[-1].params if self.frames and name.isdigit() else None
            if params:
                # a function's parameter: the call site's value, or the default when the call
                # passes none (or, for `:-`, an empty one)
                v = params.get(name)
                empty = v is not None and all(p.kind is PartKind.LIT and not p.value for p in v)
                if v is not None and not (empty and op.startswith(":")):
                    return list(v)
            known = name in self.env
            if not params and (
                known or name in ("HOME", "PWD", "USER", "LOGNAME", "UID", "$", "0")
            ):
                return self._var(name, depth)
            dparts: list[Part] = []
            for i, c in enumerate(operand):
                dparts.extend(self._parts(c, i == 0, depth + 1))
            default = PathExpr(_merge(dparts), "".join(_txt(c) for c in operand))
            if params:
                return list(default.parts)
            if op in (":=", "="):
                self.env[name] = default.parts
                return list(default.parts)
            if name.isdigit():
                return [Part(PartKind.ARG, name, default=default)]
            return [Part(PartKind.VAR, name, default=default)]
        base = self._var(name, depth)
        pat = "".join(_txt(c) for c in operand)
        if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
            if op in ("##", "#") and pat in ("*/",):
                return [Part(PartKind.SCRIPT_NAME)]
            if op in ("%", "%%") and pat == "/*":
                return [Part(PartKind.SCRIPT_DIR)]
        if op in ("%", "%%") and all(p.kind is PartKind.SCRIPT_NAME for p in base) and base:
            return base
        if op in ("%", "%%") and pat == "/*":
            pe = PathExpr(_merge(base))
            d = pe.dirname()
            if d is not None:
                return list(d.parts)
        return [Part(PartKind.UNKNOWN)]

    def _inner_cmds(self, node) -> list:
        out = []
        for c in node.named_children:
            if c.type in ("command", "list", "redirected_statement", "pipeline", "file_redirect"):
                out.append(c)
        return out

    def _cmdsub(self, node, depth: int) -> list[Part]:
        inner = self._inner_cmds(node)
        if len(inner) != 1:
            return [Part(PartKind.UNKNOWN)]
        c = inner[0]
        if c.type == "list":
            kids = [k for k in c.named_children]
            ops = [k.type for k in c.children if not k.is_named]
            if len(kids) == 2 and ops == ["&&"]:
                a, b = kids
                if a.type == "redirected_statement":
                    a = a.child_by_field_name("body") or a
                if b.type == "redirected_statement":
                    b = b.child_by_field_name("body") or b
                if (
                    a.type == "command"
                    and b.type == "command"
                    and self.cmd_name(a) == "cd"
                    and self.cmd_name(b) == "pwd"
                ):
                    args = [x for x in self.cmd_args(a) if not _txt(x).startswith("-")]
                    if len(args) == 1:
                        return self._parts(args[0], True, depth + 1)
            if len(kids) == 2 and ops == ["||"]:
                # `mktemp -d 2>/dev/null || mktemp -d -t x`: either way a fresh name
                sides = [self._cmdsub_one(k, depth) for k in kids]
                if all(len(x) == 1 and x[0].kind is PartKind.UNIQUE for x in sides):
                    return sides[0]
            return [Part(PartKind.UNKNOWN)]
        return self._cmdsub_one(c, depth)

    def _cmdsub_one(self, c, depth: int) -> list[Part]:
        """The value of one command in a command substitution."""
        if c.type == "redirected_statement":
            c = c.child_by_field_name("body") or c
        if c.type == "pipeline":
            return self._filtered_script_name(c, depth)
        if c.type != "command":
            return [Part(PartKind.UNKNOWN)]
        name = self.cmd_name(c)
        if name in self.functions:
            return self._function_output(name, depth)
        args = [x for x in self.cmd_args(c)]
        ops = [x for x in args if not _txt(x).startswith("-")]
        flags = [_txt(x) for x in args if _txt(x).startswith("-")]
        if name == "dirname" and len(ops) == 1:
            base = self._parts(ops[0], True, depth + 1)
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [Part(PartKind.SCRIPT_DIR)]
            d = PathExpr(_merge(base)).dirname()
            return list(d.parts) if d is not None else [Part(PartKind.UNKNOWN)]
        if name == "basename" and ops:
            # basename -s SUFFIX NAME / basename NAME SUFFIX: the name is the first operand
            # that is not the -s argument
            skip = {
                id(args[i + 1]) for i, x in enumerate(args[:-1]) if _txt(x) in ("-s", "--suffix")
            }
            ops = [x for x in ops if id(x) not in skip] or ops
            base = self._parts(ops[0], True, depth + 1)
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [Part(PartKind.SCRIPT_NAME)]
            pe = PathExpr(_merge(base))
            if pe.is_literal:
                return [Part(PartKind.LIT, pe.render().rstrip("/").rsplit("/", 1)[-1])]
            return [Part(PartKind.UNKNOWN)]
        if name == "pwd":
            return [Part(PartKind.CWD)]
        if name in ("readlink", "realpath") and len(ops) == 1:
            return self._parts(ops[0], True, depth + 1)
        if name == "mktemp":
            return [Part(PartKind.UNIQUE, "mktemp")]
        if name in ("whoami", "logname") or (
            name == "id" and any(f.startswith("-u") for f in flags)
        ):
            return [Part(PartKind.USER, name)]
        if name == "echo" and len(ops) == 1 and not flags:
            return self._parts(ops[0], True, depth + 1)
        return [Part(PartKind.UNKNOWN)]

    def _filtered_script_name(self, pipe, depth: int) -> list[Part]:
        """`echo "$0" | sed 's/[^a-z0-9]/_/g'`: the script's name put through text filters is
        still a name derived only from the script name."""
        stages = [k for k in pipe.named_children if k.type == "command"]
        if len(stages) < 2 or len(stages) != len(
            [k for k in pipe.named_children if k.type not in STATEMENT_SKIP]
        ):
            return [Part(PartKind.UNKNOWN)]
        if any(self.cmd_name(k) not in TEXT_FILTERS for k in stages[1:]):
            return [Part(PartKind.UNKNOWN)]
        first = self._cmdsub_one(stages[0], depth) if self.cmd_name(stages[0]) == "echo" else []
        script = (PartKind.SCRIPT, PartKind.SCRIPT_NAME)
        if any(p.kind in script for p in first) and all(
            p.kind in script or p.kind is PartKind.LIT for p in first
        ):
            return [Part(PartKind.SCRIPT_NAME)]
        return [Part(PartKind.UNKNOWN)]

    def _function_output(self, name: str, depth: int) -> list[Part]:
        """`pid=$(calc_pid)` where this file's `calc_pid` ends with `echo "$pid"`: the value it
        prints, read in the environment its body (walked for the substitution) left."""
        stmts = self.statements(self._fn_body(self.functions[name]))
        if not stmts or depth > 4:
            return [Part(PartKind.UNKNOWN)]
        last = stmts[-1][0]
        if last.type != "command" or self.cmd_name(last) != "echo":
            return [Part(PartKind.UNKNOWN)]
        parts = self._cmdsub_one(last, depth + 1)
        if any(p.kind is PartKind.ARG for p in parts):
            return [Part(PartKind.UNKNOWN)]  # its parameters are bound only inside the call
        return parts

    def command_name_of_value(self, value) -> str | None:
        """FLOCK=/usr/bin/flock, FLOCK=$(command -v flock), FLOCK=`which flock`."""
        node = value
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        if node.type in ("word", "raw_string", "string_content"):
            s = _txt(node).strip("'\"")
            base = s.rsplit("/", 1)[-1]
            return base if base in ("flock", "lockfile", "dotlockfile", "shlock", "mkdir") else None
        if node.type == "command_substitution":
            inner = self._inner_cmds(node)
            if len(inner) == 1 and inner[0].type == "redirected_statement":
                inner = [inner[0].child_by_field_name("body")]
            if len(inner) == 1 and inner[0] is not None and inner[0].type == "command":
                c = inner[0]
                if _txt(c.child_by_field_name("name")).lstrip("\"'").startswith(("$(", "`")):
                    return None  # `$($(...) -v x)` names no lock tool (and nests without end)
                n = self.cmd_name(c)
                args = [_txt(a) for a in self.cmd_args(c)]
                if n in ("command", "which", "type") and args:
                    return args[-1].strip("'\"")
        return None

    def number_of(self, arg: str) -> int | None:
        s = arg.strip("'\"")
        if s.isdigit():
            return int(s)
        m = re.fullmatch(r"\$\{?(\w+)\}?", s)
        if m:
            v = self.env.get(m.group(1))
            if v and len(v) == 1 and v[0].kind is PartKind.LIT and v[0].value.isdigit():
                return int(v[0].value)
        return None

    def _arg_text(self, a) -> str:
        """An argument's text, with variables of known literal value put in (`-$1`, `$FD`)."""
        t = _txt(a)
        if "$" not in t:
            return t
        pe = self.resolve(a)
        return pe.render() if pe.is_literal and pe.parts else t
