#!/usr/bin/env bash
# Benchmark (issue: the image generator): 10 images at whole-second times, 320x180 PNG, from a 60 s
# 1080p30 H.264 clip with B-frames and a keyframe every 250 frames, against the best ffmpeg CLI
# recipe: one `ffmpeg -ss T -i clip -frames:v 1 -vf scale=320:180` per time, two at a time on two
# cores (with `-skip_frame nokey` for the keyframe case). Prints ratios and peak memory.
# Usage: benchmarks/thumbnails.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-5}"
clip=$(bench_clip 1080p30-h264-60s-g250.mp4 60 250)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
times="3,9,15,21,27,33,39,45,51,57"
mkdir -p "$tmp/ff"
ffexact="echo $times | tr , '\n' | xargs -P 2 -I T ffmpeg -hide_banner -loglevel error -y -ss T -i $clip -frames:v 1 -vf scale=320:180 $tmp/ff/T.png"
ffkey="echo $times | tr , '\n' | xargs -P 2 -I T ffmpeg -hide_banner -loglevel error -y -skip_frame nokey -ss T -i $clip -frames:v 1 -vf scale=320:180 $tmp/ff/T.png"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/exact.json" \
  -n playhead "$bin thumbnails --out $tmp/ph --at $times --size 320x180 $clip" -n ffmpeg "$ffexact" > /dev/null
hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/key.json" \
  -n playhead "$bin thumbnails --out $tmp/ph --at $times --tolerance 10 --size 320x180 $clip" -n ffmpeg "$ffkey" > /dev/null
rss=$(/usr/bin/time -f %M "$bin" thumbnails --out "$tmp/ph" --at "$times" --size 320x180 "$clip" 2>&1 >/dev/null | tail -1)

python3 - "$tmp/exact.json" "$tmp/key.json" "$rss" <<'PY'
import json, sys
for name, path, target in [("exact", sys.argv[1], 2.0), ("keyframe", sys.argv[2], 5.0)]:
    r = {x["command"]: x["mean"] for x in json.load(open(path))["results"]}
    print(f"{name}: playhead {r['playhead']:.2f} s, ffmpeg recipe {r['ffmpeg']:.2f} s, speed-up {r['ffmpeg'] / r['playhead']:.2f}x (target >= {target})")
print(f"peak RSS (exact): {int(sys.argv[3]) / 1024:.0f} MiB")
PY
