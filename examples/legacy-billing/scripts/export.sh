#!/bin/sh
# Export yesterday's ledger. Runs in the background so cron's mail stays empty.
exec 9>/var/lock/export.lock
flock -n 9 || exit 0
nohup /srv/billing/scripts/export_ledger.py > /dev/null 2>&1 &
