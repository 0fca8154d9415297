#!/usr/bin/env bash
# The main job on the sample clips: installs what is missing, builds, probes every sample clip,
# and plays every clip with a video track into PNG frame dumps under out/ (OUT=... to change).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
bin="$(swift build -c release --show-bin-path)/playhead"
out="${OUT:-out}"
mkdir -p "$out"
good=()
for clip in SampleMedia/*.mp4 SampleMedia/*.mkv SampleMedia/*.webm SampleMedia/*.m4a SampleMedia/*.mp3; do
  case "$clip" in */bad-*|*/damaged-*) ;; *) good+=("$clip");; esac
done
"$bin" probe "${good[@]}"
"$bin" probe --json "${good[@]}" > "$out/probe.json"
video=()
for clip in "${good[@]}"; do case "$clip" in */audio-only*) ;; *) video+=("$clip");; esac; done
"$bin" play --out "$out/frames" "${video[@]}"
echo "run: probe report in $out/probe.json, frame dumps and summary.json in $out/frames/"
