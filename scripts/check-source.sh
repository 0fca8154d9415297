#!/usr/bin/env bash
# The code's form and the library's documentation, checked by the test command (and so by CI):
# - every Swift file as `swift format` (the toolchain's, configured by .swift-format) leaves it;
# - the DocC catalog and every doc comment build with swift-docc-plugin, no warning allowed (a
#   broken ``link``, a parameter documented that does not exist).
# The build itself treats warnings in Sources as errors (Package.swift).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! swift format lint --strict --recursive Sources Tests/PlayheadTests Tests/IntegrationTests Embedder/Tests Embedder/Package.swift Package.swift; then
  echo "check-source: the files above are not formatted: run 'swift format format -i -r -p Sources Tests Package.swift'" >&2
  exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift package generate-documentation --target Playhead --warnings-as-errors >"$log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\]' "$log" | tail -60 >&2
  echo "check-source: the documentation does not build cleanly (above)" >&2
  exit 1
fi
echo "check-source: formatted; the documentation builds with no warning"
