#!/usr/bin/env bash
# Benchmark (issue: manifests and shards): a library job as a batch system would run it.
#   1. probe a 10,000-line manifest (the sample clips under many names) in one playhead process,
#      against ffprobe run per file under `xargs -P 2` (2 cores): files per second and peak RSS
#      (targets: >= 20x faster, peak RSS under 150 MB);
#   2. thumbnails (--count 4, 160x90 PNG) of a 1,000-line manifest, against ffmpeg run per image
#      (`-ss T -i FILE -frames:v 1 -vf scale=…`) under `xargs -P 2`: files per second.
# Usage: benchmarks/manifest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib"
clips=(SampleMedia/h264-aac.mp4 SampleMedia/4x3.mp4 SampleMedia/video-only.mp4 SampleMedia/portrait.mp4 SampleMedia/hevc-aac.mkv SampleMedia/anamorphic.mp4)
for i in $(seq 0 9999); do
  c=${clips[$((i % ${#clips[@]}))]}
  ln -s "$PWD/$c" "$tmp/lib/clip-$i.${c##*.}"
  echo "$tmp/lib/clip-$i.${c##*.}"
done > "$tmp/probe.txt"
head -1000 "$tmp/probe.txt" > "$tmp/thumbs.txt"

# Each clip's duration once (all copies of a clip share it), for the ffmpeg thumbnail recipe.
python3 - "$tmp/thumbs.txt" "$tmp/ffjobs.txt" <<'PY'
import subprocess, sys, os
durations = {}
with open(sys.argv[1]) as manifest, open(sys.argv[2], "w") as jobs:
    for n, line in enumerate(manifest):
        path = line.strip()
        real = os.path.realpath(path)
        if real not in durations:
            durations[real] = float(subprocess.check_output(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", real]))
        d = durations[real]
        for i in range(4):
            jobs.write(f"{(i + 0.5) * d / 4:.3f} {path} {n}-{i}\n")
PY

hyperfine --runs 1 --export-json "$tmp/probe.json" \
  -n playhead "$bin probe --manifest $tmp/probe.txt --results $tmp/p.jsonl --progress-interval 0; rm -f $tmp/p.jsonl" \
  -n ffprobe "xargs -P 2 -I F ffprobe -v error -show_format -show_streams -of json F < $tmp/probe.txt > /dev/null" > /dev/null
rss=$(/usr/bin/time -f %M "$bin" probe --manifest "$tmp/probe.txt" --results "$tmp/p.jsonl" --progress-interval 0 2>&1 >/dev/null | tail -1)
records=$(grep -c '"kind":"file"' "$tmp/p.jsonl")

mkdir -p "$tmp/ff"
hyperfine --runs 1 --export-json "$tmp/thumbs.json" --prepare "rm -rf $tmp/t $tmp/t.jsonl $tmp/ff/*" \
  -n playhead "$bin thumbnails --count 4 --size 160x90 --manifest $tmp/thumbs.txt --results $tmp/t.jsonl --out $tmp/t --progress-interval 0" \
  -n ffmpeg "xargs -P 2 -L 1 sh -c 'ffmpeg -hide_banner -loglevel error -y -ss \$0 -i \$1 -frames:v 1 -vf scale=160:90:force_original_aspect_ratio=decrease $tmp/ff/\$2.png' < $tmp/ffjobs.txt" > /dev/null

python3 - "$tmp/probe.json" "$tmp/thumbs.json" "$rss" "$records" <<'PY'
import json, sys
def means(path):
    return {r["command"]: r["mean"] for r in json.load(open(path))["results"]}
p, t = means(sys.argv[1]), means(sys.argv[2])
rss, records = int(sys.argv[3]), int(sys.argv[4])
print(f"probe, 10,000-line manifest: playhead {p['playhead']:.2f} s ({10000 / p['playhead']:.0f} files/s, {records} records), "
      f"ffprobe per file x2 {p['ffprobe']:.2f} s ({10000 / p['ffprobe']:.0f} files/s): {p['ffprobe'] / p['playhead']:.1f}x (target >= 20)")
print(f"probe peak RSS: {rss / 1024:.0f} MiB (target < 150)")
print(f"thumbnails --count 4, 1,000-line manifest: playhead {t['playhead']:.2f} s ({1000 / t['playhead']:.0f} files/s), "
      f"ffmpeg per image x2 {t['ffmpeg']:.2f} s ({1000 / t['ffmpeg']:.1f} files/s): {t['ffmpeg'] / t['playhead']:.1f}x")
PY
