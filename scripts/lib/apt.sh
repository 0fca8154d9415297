# Shared by the setup scripts: `source scripts/lib/apt.sh`, then `apt_install_missing LABEL PACKAGE...`.
# Installs the Debian packages of the list that are not installed yet (with sudo unless root);
# APT_NO_SERVICES=1 keeps a package's own service from starting (no init system in CI).
apt_install_missing() {
  local label="$1"
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$label: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  if [ "${APT_NO_SERVICES:-0}" = 1 ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "${APT_NO_SERVICES:-0}" = 1 ]; then $sudo rm -f /usr/sbin/policy-rc.d; fi
}
