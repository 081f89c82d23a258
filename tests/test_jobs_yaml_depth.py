"""YAML nested deeper than tree-sitter-yaml can hold (issue 15): the parser overflows at about
254 open block collections and kills its process, whatever the stack size.  lockcheck counts
the nesting from indentation and markers first: such a definition is one LCK000 on the line
where it gets too deep, with the reason, and never reaches the parser.  Generated inputs of
each shape that kills the parser, in each YAML kind; the negatives sit within the limit, or
nest in ways the parser survives (flow collections, block scalars)."""

from __future__ import annotations

import pytest
from helpers import concise_rows, write
from test_jobs import CRONJOB_ALLOW

TOO_DEEP = "YAML nested too deeply to read (more than 200 collections deep)"
CRONJOB_LINES = CRONJOB_ALLOW.count("\n")


def mappings(n: int) -> str:
    """``level0:`` / ``  level1:`` / ...: one mapping per line."""
    return "".join("  " * i + f"level{i}:\n" for i in range(n)) + "  " * n + "leaf: 1\n"


def sequences_of_mappings(n: int) -> str:
    """``extra:`` then ``- k0:`` / ``  - k1:`` / ...: a sequence and a mapping per line (the
    parser dies at half the lines)."""
    return "extra:\n" + "".join("  " * i + f"- k{i}:\n" for i in range(n)) + "  " * n + "  leaf\n"


def inline_sequences(n: int) -> str:
    """``- - - ... x`` on one line."""
    return "extra:\n  " + "- " * n + "x\n"


# generator, the lines it takes to pass 200 levels after the CronJob (whose root mapping is
# the first level), the column of the collection that passes them
SHAPES = {
    "mappings": (mappings, 201, 401),
    "sequences of mappings": (sequences_of_mappings, 101, 201),
    "inline sequences": (inline_sequences, 2, 2 + 2 * 199 + 1),
}


def rows(cli, *args):
    status, out, err = cli("scan", "--output-format", "concise", *args)
    return status, concise_rows(out), out, err


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_cronjob_nested_too_deeply_is_one_lck000_at_its_line(cli, tmp_path, shape):
    gen, line, col = SHAPES[shape]
    write(tmp_path, "k8s/deep.yaml", CRONJOB_ALLOW + gen(300))
    write(tmp_path, "k8s/cronjob.yaml", CRONJOB_ALLOW)
    status, got, out, err = rows(cli, "--select", "LCK000,LCK601")
    where = CRONJOB_LINES + line
    assert got == [("k8s/cronjob.yaml", 2, "LCK601"), ("k8s/deep.yaml", where, "LCK000")], out
    assert f"k8s/deep.yaml:{where}:{col}: LCK000 (warning) {TOO_DEEP}" in out
    assert "crashed" not in out and "internal error" not in err and status == 1


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_same_shapes_within_the_limit_are_read(cli, tmp_path, shape):
    """The negative: 150 levels (75 for two per line) parse, and the CronJob is linted."""
    gen = SHAPES[shape][0]
    n = 75 if shape == "sequences of mappings" else 150
    write(tmp_path, "k8s/deep.yaml", CRONJOB_ALLOW + gen(n))
    _, got, out, err = rows(cli, "--select", "LCK000,LCK601")
    assert got == [("k8s/deep.yaml", 2, "LCK601")], out
    assert "internal error" not in err


def test_a_workflow_and_a_helm_template_nested_too_deeply(cli, tmp_path):
    """Every YAML kind is counted before it is parsed; a Helm template after its actions are
    masked (an action alone on its line is no level)."""
    workflow = "on:\n  schedule:\n    - cron: '0 * * * *'\njobs:\n" + "".join(
        "  " * (i + 1) + f"j{i}:\n" for i in range(260)
    )
    write(tmp_path, ".github/workflows/deep.yml", workflow)
    helm = "{{- if .Values.backup.enabled }}\n" + CRONJOB_ALLOW + mappings(260) + "{{- end }}\n"
    write(tmp_path, "chart/templates/cronjob.yaml", helm)
    _, got, out, err = rows(cli, "--select", "LCK000")
    assert got == [
        (".github/workflows/deep.yml", 4 + 200, "LCK000"),
        ("chart/templates/cronjob.yaml", 1 + CRONJOB_LINES + 201, "LCK000"),
    ], out
    assert out.count(TOO_DEEP) == 2 and "crashed" not in out and "internal error" not in err


def flow_args(text: str, value: str) -> str:
    """The CronJob with ``args: VALUE`` beside its ``command``."""
    command = next(ln for ln in text.split("\n") if "command:" in ln)
    args = command[: command.index("command:")] + "args: " + value
    return text.replace(command, command + "\n" + args)


@pytest.mark.parametrize(
    "value", ["&words " + "[" * 300 + "]" * 300, "{a: " * 300 + "1" + "}" * 300]
)
def test_flow_collections_nested_too_deeply_are_one_lck000(cli, tmp_path, value):
    """Flow collections the parser reads to any depth, but the tree reader runs out of Python
    frames at about 300 of them (with an anchor, or a merge, it reads them all at once: before,
    `internal error: RecursionError` on line 1)."""
    text = flow_args(CRONJOB_ALLOW, value)
    write(tmp_path, "k8s/flow.yaml", text)
    _, got, out, err = rows(cli, "--select", "LCK000,LCK601")
    line = text.split("\n").index(next(ln for ln in text.split("\n") if "args:" in ln)) + 1
    assert got == [("k8s/flow.yaml", line, "LCK000")], out
    assert TOO_DEEP in out and "internal error" not in out + err


def test_shallow_flows_and_brackets_in_scalars_do_not_count(cli, tmp_path):
    """The negatives: 150 nested flow sequences; a ``run: |`` script indented 300 levels deep
    (block scalar lines open nothing) that also echoes 300 brackets, quoted and not."""
    write(tmp_path, "k8s/flow.yaml", flow_args(CRONJOB_ALLOW, "[" * 150 + "]" * 150))
    script = "".join("          " + "  " * i + f"echo {i}\n" for i in range(300))
    script += "          echo '" + "[" * 300 + "' " + "{" * 300 + "\n"
    workflow = (
        "on:\n  schedule:\n    - cron: '0 * * * *'\nconcurrency: nightly\njobs:\n  a:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: |\n"
        + script
        + '      - name: "['
        + "[" * 300
        + '"\n        run: echo done\n'
    )
    write(tmp_path, ".github/workflows/script.yml", workflow)
    _, got, out, err = rows(cli, "--select", "LCK000,LCK601,LCK602")
    assert got == [("k8s/flow.yaml", 2, "LCK601")], out
    assert "internal error" not in err
