"""Shell shapes behind the misses and false findings of set H (blind-labelled in session 12,
a dev set from session 13 on, bench/recall/SET-H.md), each as a class with a positive beside
a negative, through the CLI."""

from __future__ import annotations

from helpers import lines_of, scan_files

# ------------------------- 1. a function called from a line tree-sitter could not read

UNREAD = """
    #!/bin/bash
    LOCK=/var/lib/job/job.pid
    stop_old() {{
        kill -9 "$(cat "$LOCK")"
    }}
    if [ "$1" {op} "$2" ]; then
        echo "order"; stop_old
    fi
"""


def test_a_function_called_from_an_unread_region_reports_at_its_own_lines(tmp_path):
    # `\\<` inside `[ ]` is valid bash that tree-sitter-bash reads as an ERROR region; the
    # region is re-read line by line, and the call on line 7 inlines the function body,
    # whose finding belongs on line 4 (once), as it does when the file parses
    got = scan_files(
        tmp_path,
        {"unread.sh": UNREAD.format(op="\\<"), "parsed.sh": UNREAD.format(op="=")},
    )
    assert lines_of(got["parsed.sh"], "LCK108") == {4}, got
    assert lines_of(got["unread.sh"], "LCK108") == {4}, got


# ------------------------------------------------ 2. `lockfile -!` inverts its status

LOCKFILE = """
    #!/bin/bash
    LOCK=/srv/mirror/Archive-Update-in-Progress
    if lockfile {flags} -r 0 "$LOCK" >/dev/null 2>&1 ; then
        echo "Unable to start mirror sync, lock file $LOCK exists"
        exit
    fi
    rsync -a upstream::debian-cd /srv/mirror/
    rm -f "$LOCK"
"""


def test_an_inverted_lockfile_status_makes_the_then_branch_the_busy_one(tmp_path):
    got = scan_files(
        tmp_path,
        {"inverted.sh": LOCKFILE.format(flags="-!"), "plain.sh": LOCKFILE.format(flags="")},
    )
    assert lines_of(got["inverted.sh"], "LCK401") == {5}, got  # echo, then a bare exit
    assert lines_of(got["inverted.sh"], "LCK101") == {3}, got
    # without -! the then-branch runs when the lock was taken: no busy branch to judge
    assert lines_of(got["plain.sh"], "LCK401") == set(), got
    assert lines_of(got["plain.sh"], "LCK101") == {3}, got
