#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test (unit and integration).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh debug
scripts/test-servers.sh
if [ $# -gt 0 ]; then exec swift test "$@"; fi
scripts/check-source.sh
# Tests that measure the whole process (its clock-paced frames, its thread count) run alone,
# after everything else has run in parallel, so that other tests' load does not blur them; so do
# the suites that run many CLI processes at once (manifests, hostile operations), whose load would
# blur the time bounds of the others.
isolated="PlayoutTests|PlayoutLiveTests|RealtimeAudioTests|RealtimePullTests|ThreadBudgetTests|SoakTests|ManifestTests|HostileOperationsTests|BatchOperationsTests|SourceTests|CompositorTests|CLIComposeTests|CompositionAudioTests|CompositionOracleTests|SeamTests"
swift test --skip "$isolated"
# The library as an embedding app sees it: another package, its public API alone. SwiftPM's
# build of a path dependency misses source files added to it since its last build ("cannot find
# type" for a new file): that build starts afresh when the list of source files has changed.
sources=$(find Sources -name '*.swift' | sort | sha1sum)
if [ "$(cat Embedder/.build/playhead-sources 2>/dev/null)" != "$sources" ]; then rm -rf Embedder/.build; fi
swift test --package-path Embedder --skip HostileCallerTests
# Its hostile cases one at a time: each must give back the descriptors and threads it took.
swift test --package-path Embedder --skip-build --filter HostileCallerTests
echo "$sources" > Embedder/.build/playhead-sources
# What that package can see: the public API, and none of the media layer's or the CLI's types.
scripts/boundary-probe.sh
swift test --skip-build --filter "RealtimeAudioTests|RealtimePullTests"
# The process's threads and resident memory over many sessions and loops: measured with nothing
# else running in the process.
swift test --skip-build --filter ThreadBudgetTests
swift test --skip-build --filter SoakTests
swift test --skip-build --filter "ManifestTests|HostileOperationsTests|BatchOperationsTests"
# Time bounds on misbehaving servers: measured without the rest of the suite loading the machine.
swift test --skip-build --filter SourceTests
# Compositions decode several layers and encode H.264 at once, and hold their frames for the
# oracle: run apart from the suites that measure the process's memory and time bounds.
swift test --skip-build --filter "CompositorTests|CLIComposeTests|CompositionAudioTests|CompositionOracleTests"
# Every pass of every loop against ffmpeg, several runs each: many short CLI runs.
swift test --skip-build --filter SeamTests
# A channel: one virtual hour rendered (CPU-bound), then a live one against real servers.
swift test --skip-build --filter PlayoutTests
swift test --skip-build --filter PlayoutLiveTests
