#!/bin/bash
# Cron: */15 * * * *  /opt/shop/bin/order-pull.sh
LOCK_FILE=/tmp/order-pull.lock
LEDGER=/var/log/shop/order-pull.log

exec 9>"$LOCK_FILE"
if ! flock -n 9; then
    echo "$(date -Is) skipped: previous pull still running" >> "$LEDGER"
    exit 75
fi
trap 'rm -f "$LOCK_FILE"' EXIT

curl -fsS "https://shop.example.com/api/orders?since=-1h" -o /var/spool/shop/orders.json
/opt/shop/bin/import-orders /var/spool/shop/orders.json
