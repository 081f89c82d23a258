"""The command vocabulary: a command's name and arguments after wrappers (``exec``, ``nohup``,
``timeout``...), redirects, and the dispatch to the stages that read each command (locks,
removals, tests, processes, traps); ``set`` options and the descriptors ``exec`` opens.
"""

from __future__ import annotations

import re

from ...model import Part, PartKind, PathExpr
from ...paths import lockish_text
from .data import REMOVERS, FdInfo, Pos, _Joined, _merge, _txt, _unescape_word

WRAPPERS = {"command", "builtin", "exec", "sudo", "nice", "ionice", "chrt", "time", "env"}


class Commands:
    """Command names, arguments and redirects; one command read and handed on."""

    # ------------------------------------------------------------------ commands
    def cmd_name(self, cmd) -> str:
        name = cmd.child_by_field_name("name")
        if name is None:
            return ""
        kids = name.named_children
        node = kids[0] if kids else name
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        if node.type == "simple_expansion" or node.type == "expansion":
            var = _txt(node).strip("${}")
            return self.cmdvars.get(var, "$" + var)
        if node.type == "command_substitution":
            n = self.command_name_of_value(node)
            return n or "$(...)"
        s = _unescape_word(_txt(node).strip("'\""))
        return s.rsplit("/", 1)[-1] if "/" in s else s

    def cmd_args(self, cmd) -> list:
        out = []
        for i, c in enumerate(cmd.children):
            f = cmd.field_name_for_child(i)
            if f == "argument":
                out.append(c)
        return out

    def unwrap(self, cmd):
        """(name, args, prefixes) after wrappers like exec/command/nohup/setsid."""
        name = self.cmd_name(cmd)
        args = self.cmd_args(cmd)
        prefixes = []
        guard = 0
        while guard < 5 and (name in WRAPPERS or name in ("nohup", "setsid", "timeout")) and args:
            guard += 1
            prefixes.append(name)
            if name == "exec" and _txt(args[0]).startswith("{"):
                break
            # skip the wrapper's own options (and timeout's duration)
            while args and _txt(args[0]).startswith("-"):
                args = args[1:]
            if name == "timeout" and args:
                args = args[1:]
            if name == "env":
                while args and "=" in _txt(args[0]):
                    args = args[1:]
            if name in ("nice",) and args and _txt(args[0]).lstrip("-").isdigit():
                args = args[1:]
            if not args:
                break
            a0 = args[0]
            s = a0
            if s.type == "string" and len(s.named_children) == 1:
                s = s.named_children[0]
            if s.type in ("simple_expansion", "expansion"):
                var = _txt(s).strip("${}")
                name = self.cmdvars.get(var, "$" + var)
            elif s.type == "command_substitution":
                name = self.command_name_of_value(s) or "$(...)"
            else:
                w = _unescape_word(_txt(a0).strip("'\""))
                name = w.rsplit("/", 1)[-1]
            args = args[1:]
        return name, args, prefixes

    def redirect_info(self, r):
        """(fd or None, operator, destination node) of a file_redirect."""
        if r.type != "file_redirect":
            return None
        fd = None
        op = ""
        dest = None
        for i, c in enumerate(r.children):
            f = r.field_name_for_child(i)
            if f == "descriptor" or c.type == "file_descriptor":
                fd = _txt(c)
            elif f == "destination":
                dest = (
                    c
                    if dest is None
                    else _Joined(dest, c, self.src if self.offmap is None else self._sub_src)
                )
            elif not c.is_named or c.type == "ERROR":
                op += _txt(c)
        return fd, op.replace(" ", ""), dest

    def command(self, cmd, pos: Pos, redirects, stmt_node) -> None:
        if cmd is None:
            name, args, prefixes = ":", [], []
        else:
            if self._split_assignment(cmd):
                return
            name, args, prefixes = self.unwrap(cmd)
            # prefix assignments (FOO=x cmd) do not touch the script's variables
        argt = [_txt(a) for a in args]
        for a, t in zip(args, argt, strict=False):
            if "flock" in t and not self.in_trap:
                self._walk_substitutions(a, None, flock_only=True)  # echo "$(flock L cmd)"
        background = pos.background
        if "nohup" in prefixes and background:
            background = "nohup"
        if "setsid" in prefixes:
            background = background or "setsid"
        # command substitutions inside arguments may hold commands of interest (kill -0 ...)
        # exec with fds / redirects
        if name == "exec" or (name in ("exec",) and not args):
            self.exec_(cmd, args, redirects, pos)
            return
        if name == "set":
            self.set_(argt)
            return
        if name == "trap":
            self.trap_(cmd, args, pos)
            return
        if name == "wait":
            self.wait_(args)
            return
        if name == "disown":
            # a disowned child is never waited for: the children started so far stay reported
            self.facts.backgrounds.extend(self.pending_bg)
            self.pending_bg = []
            return
        if name == "lockfile-touch":
            background = None  # refreshes the lock's age; killed before the release
        if background and cmd is not None:
            closes = any(
                (self.redirect_info(r) or (None, ""))[1] in (">&-", "<&-") for r in redirects
            )
            if not closes:
                self.background_at(cmd, background)
        # functions: walk the body where it is called
        if name in self.functions and cmd is not None and not self.in_trap:
            self.call(name, cmd, args, pos)
            self.redirect_writes(redirects, pos, cmd)
            return
        if name == "mkdir":
            self.mkdir_(cmd, args, pos, redirects)
        elif name == "flock":
            self.flock_(cmd, args, pos, prefixes, redirects)
        elif name == "lock" and self._openwrt_lock():
            self.openwrt_lock_(cmd, args, pos)
        elif name in ("ln",):
            self.ln_(cmd, args, pos)
        elif name == "dotlockfile" and any(_txt(a) in ("-u", "--unlock") for a in args):
            ops = [a for a in args if not _txt(a).startswith("-")]
            for a in ops[-1:]:
                self.add_removal(cmd, self.resolve(a), a, 1, pos)
        elif name in ("lockfile", "lockfile-create", "dotlockfile", "shlock"):
            self.lockfile_(cmd, name, args, pos)
        elif name in REMOVERS:
            self.remove_(cmd, name, args, pos)
        elif name == "lockfile-remove":
            for a in args:
                if not _txt(a).startswith("-"):
                    p = self.resolve(a)
                    if not p.key().endswith(".lock"):
                        p = PathExpr(_merge([*p.parts, Part(PartKind.LIT, ".lock")]), p.text)
                    self.add_removal(cmd, p, a, 1, pos)
        elif name in ("mkfifo", "mknod"):
            ops = [a for a in args if not _txt(a).startswith("-")]
            if name == "mkfifo" or (len(ops) >= 2 and _txt(ops[1]) == "p"):
                for a in ops if name == "mkfifo" else ops[:1]:
                    self.fifos.add(self.resolve(a).key())
        elif name == "touch":
            for a in args:
                if not _txt(a).startswith("-"):
                    self.created_path(self.resolve(a), cmd, pos)
        elif name == "mv" and not any(_txt(a).startswith(("-t", "--target")) for a in args):
            # `mv "$L.ok" "$L.running"`: the rename makes the destination's name (a lock-like
            # one: a file moved into place, `mv "$tmp" "$OUT"`, is an install or an output)
            ops = [a for a in args if not _txt(a).startswith("-")]
            dest = self.resolve(ops[-1]) if len(ops) >= 2 else None
            if dest is not None and lockish_text(dest.render().rsplit("/", 1)[-1]):
                self.created_path(dest, cmd, pos)
        elif name in ("kill", "pkill"):
            self.kill_(cmd, name, args, pos)
        elif name in ("ps", "pgrep", "pidof"):
            self.ps_(cmd, name, args, pos)
        elif name in ("$0", "${0}") and argt[:1] == ["status"]:
            self.running_service(cmd, pos.on_success if pos.tested else None)
        elif name in ("[", "test"):
            self.bracket_test(cmd, args, pos)
        elif name == "find":
            self.find_(cmd, args, pos)
        elif name == "read":
            skip = False
            for a in argt:
                if skip:
                    skip = False
                    continue
                if a in ("-p", "-d", "-n", "-N", "-t", "-u", "-a", "-i"):
                    skip = True
                    continue
                if not a.startswith("-"):
                    self.env[a] = None  # read at run time
                    self.pidvars.pop(a, None)
            src = self.stdin[-1] if self.stdin else None
            for r in redirects:
                info = self.redirect_info(r)
                if info and info[1] in ("<", "<>") and info[0] in (None, "0"):
                    src = self.resolve(info[2])
            if src is not None:
                for a in argt:
                    if not a.startswith("-") and a in self.env:
                        self.pidvars[a] = src
        elif name in ("export", "readonly", "local", "declare", "typeset"):
            pass
        elif name == "eval" and self.eval_exec(args, pos):
            pass
        elif name == "eval":
            # code run by eval is not analysed; paths it names are the script's own business
            for m in re.finditer(r"\$\{?(\w+)\}?", " ".join(argt)):
                if not m.group(1).isdigit():
                    self.facts.created.append(PathExpr(tuple(self._var(m.group(1), 0))))
        elif name == "start-stop-daemon":
            for i, a in enumerate(argt):
                if a in ("--pidfile", "-p") and i + 1 < len(args):
                    self.facts.created.append(self.resolve(args[i + 1]))
        self.redirect_writes(redirects, pos, cmd or stmt_node, name)

    # ------------------------------------------------------------------ set / exec
    def set_(self, argt: list[str]) -> None:
        i = 0
        while i < len(argt):
            a = argt[i]
            if a in ("-o", "+o") and i + 1 < len(argt):
                opt = argt[i + 1]
                on = a == "-o"
                if opt == "errexit":
                    self.set_e = on
                elif opt == "noclobber":
                    self.noclobber = on
                i += 2
                continue
            if a.startswith("-") and not a.startswith("--"):
                if "e" in a:
                    self.set_e = True
                if "C" in a:
                    self.noclobber = True
            elif a.startswith("+"):
                if "e" in a:
                    self.set_e = False
                if "C" in a:
                    self.noclobber = False
            i += 1

    def exec_(self, cmd, args, redirects, pos: Pos) -> None:
        fdvar = None
        if args:
            a0 = _txt(args[0])
            m = re.fullmatch(r"\{(\w+)\}", a0)
            if m:
                fdvar = m.group(1)
        for r in redirects:
            info = self.redirect_info(r)
            if not info:
                continue
            fd, op, dest = info
            if op in (">&-", "<&-"):
                if fd in self.fds:
                    self.fds.pop(fd, None)
                continue
            if fdvar is not None and fd is None:
                key = "$" + fdvar
                self.fdvars.add(fdvar)
                self.env[fdvar] = None
                path = self.resolve(dest)
                self.fds[key] = FdInfo(
                    path,
                    self.span(cmd if cmd is not None else r),
                    op in (">", ">|"),
                    unchecked=not (pos.tested or self.set_e),
                )
                self.facts.created.append(path)
                fdvar = None
                continue
            if fd is not None and fd not in ("0", "1", "2") and dest is not None:
                path = self.resolve(dest)
                span_node = (
                    cmd.parent
                    if cmd is not None
                    and cmd.parent is not None
                    and cmd.parent.type == "redirected_statement"
                    else (cmd or r)
                )
                self.fds[fd] = FdInfo(
                    path,
                    self.span(span_node),
                    op in (">", ">|"),
                    unchecked=not (pos.tested or self.set_e),
                )
                self.facts.created.append(path)
                if op in (">", ">|", ">>", "<>"):
                    # the lock file created after a test of it that skips: judged like
                    # `touch L` there (a pre-created flock file only when never removed)
                    self.check_then_create(path, span_node)
                continue
            if fd in (None, "1", "2") and dest is not None:
                d = _txt(dest)
                if op in (">>", "&>>") and not d.startswith("/dev/"):
                    self.durable_global = True
                if dest.type == "process_substitution" and re.search(
                    r"\b(logger|systemd-cat)\b|\btee\s+(-\w*a|--append)", d
                ):
                    self.durable_global = True
                if (
                    op in (">", "&>")
                    and not d.startswith(("/dev/", "&"))
                    and dest.type != "process_substitution"
                    and not d.isdigit()
                ):
                    self.durable_global = True
        if args and fdvar is None:
            # exec cmd ... : the command replaces the shell
            pass

    def cmd_name_word(self, a) -> str:
        s = _txt(a).strip("'\"")
        if a.type in ("command_substitution",) or (
            a.type == "string"
            and a.named_children
            and a.named_children[0].type == "command_substitution"
        ):
            n = a if a.type == "command_substitution" else a.named_children[0]
            return self.command_name_of_value(n) or ""
        if s.startswith("$"):
            return self.cmdvars.get(s.strip("${}"), "")
        return s.rsplit("/", 1)[-1]
