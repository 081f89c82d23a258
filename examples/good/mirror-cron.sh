#!/bin/sh
# Cron: 0 * * * *  /opt/mirror/bin/mirror-cron.sh
# flock's command form with a conflict status of its own: 75 means "previous mirror still
# running", anything else is rsync's own status.
exec flock -n -E 75 "${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/mirror.lock" \
    rsync -a --delete --timeout=600 rsync://mirror.example.org/pub/ /srv/mirror/pub/
