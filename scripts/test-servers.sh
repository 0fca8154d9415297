#!/usr/bin/env bash
# Installs what the live tests run for real (Debian packages): nginx with its RTMP module (HLS
# served over HTTP, RTMP taken), and mpv (a real player reading HLS over HTTP). The tests start
# and stop their own nginx on free loopback ports; nothing here starts a service. tesseract-ocr
# reads the contact sheets' text back.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/apt.sh
# A package's own service is not wanted (no init system in CI; the tests run their own).
APT_NO_SERVICES=1 apt_install_missing test-servers nginx-light libnginx-mod-rtmp mpv tesseract-ocr
