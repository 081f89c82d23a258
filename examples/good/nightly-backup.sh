#!/bin/bash
# Cron: 30 2 * * *  /usr/local/sbin/nightly-backup.sh
# Reference pattern: a flock held on a descriptor, in run-private storage, never deleted;
# a busy run records the skip and exits 75 (EX_TEMPFAIL).
set -euo pipefail

LOCK_DIR="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}"
LOCK_FILE="$LOCK_DIR/nightly-backup.lock"
LEDGER="${BACKUP_LEDGER:-$HOME/.local/state/nightly-backup.log}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

exec 9<>"$LOCK_FILE"
if ! flock -n 9; then
    printf '%s skipped: previous backup still running\n' "$(date -Is)" >> "$LEDGER"
    exit 75
fi
printf '%s acquired\n' "$(date -Is)" >> "$LEDGER"

tar -C / -czf "$WORK/etc.tar.gz" etc
cp "$WORK/etc.tar.gz" "/backup/etc-$(date +%F).tar.gz"
printf '%s done\n' "$(date -Is)" >> "$LEDGER"
