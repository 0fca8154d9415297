#!/usr/bin/env bash
# The main job on the sample clips: installs what is missing, builds, probes every sample clip,
# and plays every clip into PNG frame dumps and WAV audio under out/ (OUT=... to change).
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
# Video frames to PNG, audio to WAV (audio-only files give just their WAV).
"$bin" play --out "$out/frames" "${good[@]}"
echo "run: probe report in $out/probe.json, frame dumps, audio.wav files and summary.json in $out/frames/"
