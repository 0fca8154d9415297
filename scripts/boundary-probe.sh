#!/usr/bin/env bash
# What an embedding app can see: after the Embedder package has built Playhead as an outside
# package does, snippets are type-checked against its modules, without the package's name (so
# `package` declarations are hidden, as from any other package). The control must compile; each
# probe must fail with "cannot find …": FFmpeg's API, the media layer's owners and the CLI's
# run-folder types are not Playhead's API.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=Embedder/.build/debug/Modules
[ -f "$modules/Playhead.swiftmodule" ] || { echo "boundary-probe: build the Embedder package first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() {
  swiftc -typecheck -I "$modules" -Xcc -fmodule-map-file="$PWD/Sources/CFFmpeg/module.modulemap" \
    -Xcc -fmodule-map-file="$PWD/Sources/CPlayheadSystem/module.modulemap" "$1" >"$work/out" 2>&1
}
printf 'import Playhead\nlet t = MediaTime(value: 1, timescale: 2)\nlet s: any FrameSink = NullSink()\nlet e = PlayheadError.Code.cancelled\n' >"$work/control.swift"
if ! check "$work/control.swift"; then
  cat "$work/out" >&2
  echo "boundary-probe: the control (public API) does not compile: the probe proves nothing" >&2
  exit 1
fi
failures=0
for use in 'avformat_version()' 'OutputFolder.self' 'WrittenLog.self' 'OwnershipManifest.self' 'WrittenMedia.self' \
  'SafeFile.self' 'Demuxer.self' 'OwnedFrame.self' 'MuxedFile.self' 'FilterGraph.self' 'StreamDecoder.self'; do
  printf 'import Playhead\nlet probe = %s\n' "$use" >"$work/probe.swift"
  if check "$work/probe.swift" || ! grep -q "cannot find" "$work/out"; then
    echo "boundary-probe: an app can reach $use" >&2
    failures=$((failures + 1))
  fi
done
# The blocking finishOutput() is for synchronous code alone: in async code the call without
# `await` must be refused (it once chose the blocking overload and held a cooperative thread),
# with `await` it takes the async one, and synchronous code still reaches the blocking one.
for player in Player QueuePlayer; do
  printf 'import Playhead\nfunc inAsync(_ p: %s) async throws { try await p.finishOutput() }\nfunc inSync(_ p: %s) throws { try p.finishOutput() }\n' \
    "$player" "$player" >"$work/finish.swift"
  if ! check "$work/finish.swift"; then
    cat "$work/out" >&2
    echo "boundary-probe: $player.finishOutput() cannot be called as documented" >&2
    failures=$((failures + 1))
  fi
  printf 'import Playhead\nfunc inAsync(_ p: %s) async throws { try p.finishOutput() }\n' "$player" >"$work/blocking.swift"
  if check "$work/blocking.swift" || ! grep -q "is 'async' but is not marked with 'await'" "$work/out"; then
    echo "boundary-probe: async code reaches $player's blocking finishOutput()" >&2
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "boundary-probe: the public API alone is visible (11 probes refused, the control compiles); async code never reaches a blocking finishOutput()"
