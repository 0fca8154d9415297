#!/usr/bin/env bash
# Installs what Playhead needs that is missing (Debian packages), then builds.
# Usage: scripts/setup.sh [release|debug]     (default debug)
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib/apt.sh
apt_install_missing setup libavformat-dev libavcodec-dev libavfilter-dev libavutil-dev libswscale-dev libswresample-dev pkg-config ffmpeg hyperfine time python3 fonts-dejavu-core

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: no Swift toolchain on PATH (Swift 6 or later is needed: https://www.swift.org/install/linux/)" >&2
  exit 1
fi

configuration="${1:-debug}"
# The build's own status decides (its progress lines are left out of what is shown): a failed
# build must not leave an older binary to be run as if it were this tree's.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! swift build -c "$configuration" > "$log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\]' "$log" >&2 || true
  echo "setup: the $configuration build failed" >&2
  exit 1
fi
grep -vE '^\[[0-9]+/[0-9]+\]' "$log" || true
test -x "$(swift build -c "$configuration" --show-bin-path)/playhead"
