#!/bin/bash
# Cron: 0 3 * * *  /usr/local/sbin/rotate-app-logs.sh [app...]
# Rotates the logs of the given apps (default: all of them), one rotation at a time.
set -euo pipefail
LOCK_FILE="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/rotate-app-logs.lock"
apps=("$@")
[ "${#apps[@]}" -gt 0 ] || apps=(web worker scheduler)

exec 9>"$LOCK_FILE"
flock -n 9 || { logger -t rotate-app-logs "skipped: rotation already running"; exit 75; }

for app in "${apps[@]}"; do
    case "$app" in
        web | worker | scheduler)
            /usr/sbin/logrotate --state "/var/lib/rotate-app-logs/$app.status" "/etc/app/$app.logrotate"
            ;;
        *)
            echo "unknown app: $app" >&2
            ;;
    esac
done
