#!/bin/bash
# Cron: */30 * * * *  ~/bin/sync-photos-dropbox.sh
# Copies new camera uploads into the family Dropbox folder.
set -u
DROPBOX_DIR="$HOME/Dropbox/Family/Photos"
LOCK_DIR="$DROPBOX_DIR/.sync.lock"
SOURCE_DIR=/srv/camera-uploads

if ! mkdir "$LOCK_DIR" 2>/dev/null; then
    echo "sync already running"
    exit
fi
trap 'rmdir "$LOCK_DIR"' EXIT

find "$SOURCE_DIR" -type f -newer "$DROPBOX_DIR/.last-sync" -print0 |
    while IFS= read -r -d '' photo; do
        cp -n "$photo" "$DROPBOX_DIR/"
    done
touch "$DROPBOX_DIR/.last-sync"
