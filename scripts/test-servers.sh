#!/usr/bin/env bash
# Installs what the live tests run for real (Debian packages): nginx with its RTMP module (HLS
# served over HTTP, RTMP taken), and mpv (a real player reading HLS over HTTP). The tests start
# and stop their own nginx on free loopback ports; nothing here starts a service.
set -euo pipefail
packages=(nginx-light libnginx-mod-rtmp mpv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-servers: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # A package's own service is not wanted (no init system in CI; the tests run their own).
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  $sudo rm -f /usr/sbin/policy-rc.d
fi
