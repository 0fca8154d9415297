#!/usr/bin/env bash
# The code's form and the library's documentation, checked by the test command (and so by CI):
# - every Swift file as `swift format` (the toolchain's, configured by .swift-format) leaves it;
# - only PlayheadMedia imports FFmpeg's C module;
# - the DocC catalog and every doc comment build with DocC, no warning allowed (a broken ``link``,
#   a parameter documented that does not exist).
# The build itself treats warnings in Sources as errors (Package.swift).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! swift format lint --strict --recursive Sources Tests/PlayheadTests Tests/IntegrationTests Embedder/Tests Embedder/Package.swift Package.swift; then
  echo "check-source: the files above are not formatted: run 'swift format format -i -r -p Sources Tests Package.swift'" >&2
  exit 1
fi
# The layers (docs/architecture.md): FFmpeg's C API is imported by PlayheadMedia alone, and the
# three glibc shims by PlayheadMedia and the run-folder target. The compiler keeps FFmpeg's types
# out of every `package` and public declaration of PlayheadMedia (its `internal import`), so no
# other target can reach them through it; a direct `import CFFmpeg` elsewhere would still find
# the module map SwiftPM hands every dependent target, and is refused here.
strays=$(grep -rlE '^\s*(@_exported |public |package |internal |private |fileprivate )?import CFFmpeg' Sources --include='*.swift' | grep -v '^Sources/PlayheadMedia/' || true)
strays+=$(grep -rlE '^\s*(@_exported |public |package |internal |private |fileprivate )?import CPlayheadSystem' Sources --include='*.swift' \
  | grep -vE '^Sources/(PlayheadMedia|PlayheadRunFolder)/' || true)
if [ -n "$strays" ]; then
  echo "check-source: only PlayheadMedia imports CFFmpeg (and it or PlayheadRunFolder CPlayheadSystem):" >&2
  echo "$strays" >&2
  exit 1
fi
# The documentation: the symbol graph of the Playhead module as the compiler emits it while
# building (it holds the types PlayheadMedia's re-export makes Playhead's, which the DocC plugin's
# extractor leaves out: docs/decisions/0009), then DocC, no warning allowed.
log=$(mktemp)
graphs=$(mktemp -d)
trap 'rm -rf "$log" "$graphs"' EXIT
if ! swift build --scratch-path .build-docs --target Playhead -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir \
  -Xswiftc "$graphs/all" -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public >"$log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\]' "$log" | tail -40 >&2
  echo "check-source: the symbol graph for the documentation could not be built (above)" >&2
  exit 1
fi
mkdir -p "$graphs/playhead"
cp "$graphs/all/Playhead.symbols.json" "$graphs/playhead/"
if ! docc convert Sources/Playhead/Playhead.docc --additional-symbol-graph-dir "$graphs/playhead" --fallback-display-name Playhead \
  --fallback-bundle-identifier playhead --output-path "${DOCS_OUT:-$graphs/Playhead.doccarchive}" --warnings-as-errors >"$log" 2>&1; then
  grep -E 'warning|error' "$log" | head -60 >&2
  echo "check-source: the documentation does not build cleanly (above)" >&2
  exit 1
fi
echo "check-source: formatted; the documentation builds with no warning"
