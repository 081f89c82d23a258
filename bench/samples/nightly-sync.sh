#!/usr/bin/env bash
# Sample job script for `bench/run.py single`: a nightly mirror job of ordinary size and
# shape (arrays, case, [[ ]], functions, a here-doc, a flock guard and an EXIT trap).
set -euo pipefail

readonly JOB_NAME="${0##*/}"
readonly STATE_DIR="${STATE_DIR:-/var/lib/nightly-sync}"
readonly LOG_FILE="$STATE_DIR/sync.log"
readonly LOCK_FILE="${XDG_RUNTIME_DIR:-/run/lock}/$JOB_NAME.lock"
declare -a TARGETS=("mirror-a:/srv/a" "mirror-b:/srv/b")
DRY_RUN=0
VERBOSE=0

usage() {
    cat <<USAGE
Usage: $JOB_NAME [-n] [-v] [TARGET...]
  -n   dry run: show what would be copied
  -v   verbose output
USAGE
}

log() {
    printf '%s %s[%d]: %s\n' "$(date -u +%FT%TZ)" "$JOB_NAME" "$$" "$*" >>"$LOG_FILE"
    if [[ $VERBOSE -eq 1 ]]; then
        printf '%s\n' "$*" >&2
    fi
}

while getopts ':nvh' opt; do
    case "$opt" in
        n) DRY_RUN=1 ;;
        v) VERBOSE=1 ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 64 ;;
    esac
done
shift $((OPTIND - 1))
if [[ $# -gt 0 ]]; then
    TARGETS=("$@")
fi

mkdir -p "$STATE_DIR"
exec 9<>"$LOCK_FILE"
if ! flock -n 9; then
    log "another run holds $LOCK_FILE; skipping"
    exit 75
fi

cleanup() {
    local rc=$?
    log "finished with status $rc"
    exit "$rc"
}
trap cleanup EXIT

sync_one() {
    local spec=$1 host dir
    host=${spec%%:*}
    dir=${spec#*:}
    local -a opts=(--archive --delete --partial)
    [[ $DRY_RUN -eq 1 ]] && opts+=(--dry-run)
    if ! rsync "${opts[@]}" "$host:$dir/" "$dir/"; then
        log "sync of $spec failed"
        return 1
    fi
    log "synced $spec"
}

failed=0
for spec in "${TARGETS[@]}"; do
    case "$spec" in
        *:*) sync_one "$spec" || failed=$((failed + 1)) ;;
        *) log "ignoring malformed target '$spec'" ;;
    esac
done

if (( failed > 0 )); then
    log "$failed target(s) failed"
    exit 1
fi
