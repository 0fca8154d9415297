#!/usr/bin/env bash
# Installs what Playhead needs that is missing (Debian packages), then builds.
# Usage: scripts/setup.sh [release|debug]     (default debug)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libavformat-dev libavcodec-dev libavfilter-dev libavutil-dev libswscale-dev libswresample-dev pkg-config ffmpeg hyperfine time python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: no Swift toolchain on PATH (Swift 6 or later is needed: https://www.swift.org/install/linux/)" >&2
  exit 1
fi

configuration="${1:-debug}"
swift build -c "$configuration" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
test -x "$(swift build -c "$configuration" --show-bin-path)/playhead"
