#!/bin/bash
# Cron: 0 * * * *  /opt/crawler/bin/crawler.sh
# Hourly crawl; a crawl still running from the previous hour is stopped first.
PIDFILE=/var/lib/crawler/crawler.pid
LOCK_FILE="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/crawler.lock"

if [ -s "$PIDFILE" ]; then
    kill "$(cat "$PIDFILE")" 2>/dev/null
    sleep 5
fi

exec 9<>"$LOCK_FILE"
flock -n 9 || { logger -t crawler "skipped: lock still held"; exit 75; }
echo $$ > "$PIDFILE"
/opt/crawler/bin/crawl --catalogue partners
