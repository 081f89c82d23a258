"""Airflow DAG files: Python read with ``ast`` (never imported or run).  A DAG is a ``DAG(...)``
call (also in ``with``) or a function decorated ``@dag(...)``."""

from __future__ import annotations

import ast

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock


def _name(f: ast.expr) -> str:
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _kw(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _value(k: ast.keyword) -> Setting:
    v = k.value
    if isinstance(v, ast.Constant):
        return Setting(
            None if v.value is None else str(v.value), v.lineno, v.col_offset + 1, templated=False
        )
    return Setting(None, k.value.lineno, templated=True)


def _tis_one(call: ast.Call) -> bool:
    k = _kw(call, "max_active_tis_per_dag")
    return k is not None and isinstance(k.value, ast.Constant) and k.value.value == 1


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "airflow", text)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        d.errors.append(
            DefError(exc.lineno or 1, exc.offset or 1, f"Python does not parse: {exc.msg}")
        )
        return d
    dags: list[ast.Call] = []
    operators: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            n = _name(node.func)
            if n == "DAG":
                dags.append(node)
            elif n.endswith(("Operator", "Sensor")) or n in ("task",):
                operators.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and _name(dec.func) == "dag":
                    dags.append(dec)
    all_tis = bool(operators) and all(_tis_one(o) for o in operators)
    for call in dags:
        sched = _kw(call, "schedule") or _kw(call, "schedule_interval") or _kw(call, "timetable")
        e = Entry("airflow-dag", _dag_id(call), call.lineno, call.col_offset + 1)
        e.scheduled = sched is not None and not (
            isinstance(sched.value, ast.Constant) and sched.value.value is None
        )
        k = _kw(call, "max_active_runs")
        e.settings["max_active_runs"] = (
            _value(k) if k else Setting(None, call.lineno, call.col_offset + 1)
        )
        default_args = _kw(call, "default_args")
        tis = all_tis or (
            default_args is not None
            and isinstance(default_args.value, ast.Dict)
            and any(
                isinstance(key, ast.Constant)
                and key.value == "max_active_tis_per_dag"
                and isinstance(v, ast.Constant)
                and v.value == 1
                for key, v in zip(default_args.value.keys, default_args.value.values, strict=True)
            )
        )
        e.settings["max_active_tis_per_dag"] = Setting("1" if tis else None, call.lineno)
        for o in operators:
            bc = _kw(o, "bash_command")
            if (
                bc is not None
                and isinstance(bc.value, ast.Constant)
                and isinstance(bc.value.value, str)
            ):
                cmd = bc.value.value
                e.commands.append(
                    Command(
                        cmd, bc.value.lineno, bc.value.col_offset + 2, wrapped=wrapper_lock(cmd)
                    )
                )
        d.entries.append(e)
    for tok_line, line in enumerate(text.split("\n"), 1):
        if "#" in line:
            d.comments[tok_line] = line[line.index("#") :]
    return d


def _dag_id(call: ast.Call) -> str:
    k = _kw(call, "dag_id")
    v = k.value if k else (call.args[0] if call.args else None)
    return str(v.value) if isinstance(v, ast.Constant) else "DAG"
