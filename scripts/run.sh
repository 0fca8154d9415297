#!/usr/bin/env bash
# The main job on the sample clips: installs what is missing, builds, probes every sample clip,
# plays every clip into PNG frame dumps and WAV audio, and draws each video's contact sheet, under
# out/ (OUT=... to change).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
bin="$(swift build -c release --show-bin-path)/playhead"
out="${OUT:-out}"
mkdir -p "$out"
good=()
videos=()
for clip in SampleMedia/*.mp4 SampleMedia/*.mkv SampleMedia/*.webm SampleMedia/*.m4a SampleMedia/*.mp3; do
  case "$clip" in
    */bad-*|*/damaged-*) ;;
    *.m4a|*.mp3) good+=("$clip");;
    *) good+=("$clip"); videos+=("$clip");;
  esac
done
"$bin" probe "${good[@]}"
"$bin" probe --json "${good[@]}" > "$out/probe.json"
# Video frames to PNG, audio to WAV (audio-only files give just their WAV).
"$bin" play --out "$out/frames" "${good[@]}"
# A contact sheet of each video: eight exact pictures with their times under a header.
"$bin" thumbnails --out "$out/thumbs" --count 8 --size 320x180 --sheet --skip-blank "${videos[@]}"
echo "run: probe report in $out/probe.json, frame dumps, audio.wav files and summary.json in $out/frames/," \
  "contact sheets in $out/thumbs/*/sheet.png"
