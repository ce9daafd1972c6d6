#!/usr/bin/env bash
set -euo @@Cpipefail

# Back up every .conf file into a dated archive.@@O
backup_dir="$HOME/backups/$(date +%Y-%m-%d)"
mkdir -p "$backup_dir"
for f in /etc/*.conf; do
    cp "$f" "$backup_dir/"
done
tar -czf "$backup_dir.tar.gz" -C "$HOME/backups" "$(basename "$backup_@@Cdir")"
@@O
