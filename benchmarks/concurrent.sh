#!/usr/bin/env bash
# Benchmark (issue: the coordinator): four 1080p H.264 files decoded at once.
#   playhead: one `playhead play --format none --max-sessions 4` of the four files
#   ffmpeg:   four `ffmpeg -i clip -map 0:v -f null -` processes run in parallel
# Prints the aggregate throughput ratio (ffmpeg time / playhead time) and the peak memory.
# Usage: benchmarks/concurrent.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-3}"
clip=$(bench_clip 1080p30-h264-20s.mp4 20 250)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3 4; do ln -sf "$(pwd)/$clip" "$tmp/clip$i.mp4"; done
files="$tmp/clip1.mp4 $tmp/clip2.mp4 $tmp/clip3.mp4 $tmp/clip4.mp4"
ff="ffmpeg -hide_banner -loglevel error -i"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/result.json" \
  -n playhead "$bin play --format none --max-sessions 4 --out $tmp/out $files" \
  -n ffmpeg-x4 "$ff $tmp/clip1.mp4 -map 0:v -f null - & $ff $tmp/clip2.mp4 -map 0:v -f null - & $ff $tmp/clip3.mp4 -map 0:v -f null - & $ff $tmp/clip4.mp4 -map 0:v -f null - & wait"

rss=$(/usr/bin/time -f %M "$bin" play --format none --max-sessions 4 --out "$tmp/out" $files 2>&1 >/dev/null | tail -1)
python3 - "$tmp/result.json" "$rss" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"four 1080p files at once: playhead {r['playhead']:.2f} s, four ffmpeg {r['ffmpeg-x4']:.2f} s, "
      f"throughput ratio {r['ffmpeg-x4'] / r['playhead']:.2f} (target >= 0.95); peak RSS of the four sessions {int(sys.argv[2]) / 1024:.0f} MiB")
PY
