#!/usr/bin/env bash
# rotate-logs.sh: compress logs older than a day and delete those older than a month.
set -eu

LOG_DIR="${1:-/var/log/myapp}"
KEEP_DAYS=30@@O

if [ ! -d "$LOG_DIR" ]; then
    echo "no such directory: $LOG_DIR" >&2
    exit 1
fi

echo "compressing old logs in $LOG_DIR"
find "$LOG_DIR" -name '*.log' -mtime +1 -exec gzip {} \;@@O

echo "removing archives older than $KEEP_DAYS days"
find "$LOG_DIR" -name '*.gz' -mtime +"$@@CKEEP_DAYS" -delete
@@O
