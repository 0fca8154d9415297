#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test (unit and integration).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh debug
if [ $# -gt 0 ]; then exec swift test "$@"; fi
# Everything in parallel, except the tests that pace against the machine's clock...
swift test --skip RealtimeAudioTests
# ...which run alone afterwards, so that other tests' load does not make their frames late.
swift test --skip-build --filter RealtimeAudioTests
