#!/usr/bin/env bash
# The main job on the sample clips: installs what is missing, builds, and probes every sample clip.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
bin="$(swift build -c release --show-bin-path)/playhead"
out="${OUT:-out}"
mkdir -p "$out"
clips=(SampleMedia/*.mp4 SampleMedia/*.mkv SampleMedia/*.webm SampleMedia/*.m4a SampleMedia/*.mp3)
good=()
for clip in "${clips[@]}"; do case "$clip" in */bad-*) ;; *) good+=("$clip");; esac; done
"$bin" probe "${good[@]}"
"$bin" probe --json "${good[@]}" > "$out/probe.json"
echo "run: probe report written to $out/probe.json"
