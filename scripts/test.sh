#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test (unit and integration).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh debug
swift test "$@"
