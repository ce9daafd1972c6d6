#!/usr/bin/env bash
# deploy.sh - build the site and copy it to the web server.
set -euo pipefail

SERVER="deploy@example.org"
TARGET="/var/www/site"
BUILD_DIR="dist"

log() {
    printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

log "cleaning old build"@@M
rm -rf "$BUILD_DIR"

log "building"
npm ci@@M
npm run build

if [ ! -d "$BUILD_DIR" ]; then
    log "build failed: $BUILD_DIR is missing"@@M
    exit 1
fi

log "uploading to $SERVER"
rsync -az --delete "$BUILD_DIR/" "$SERVER:@@C$TARGET/"
@@Mlog "done"
@@O
