#!/usr/bin/env bash
# Benchmark (issue: one media reader): 100 random frame-exact player seeks on a 60 s 1080p30 H.264
# clip (B-frames, a keyframe every 250 frames), each timed from the call to the moment the frame
# displayed at the target is decoded and converted to RGB (the seek returns then; the player is
# paused, its reader stays open and moves in place), against `ffmpeg -ss T -i clip -frames:v 1`
# run once per seek to the same times (the way to get one frame at a time without a player).
# Prints the median and p95 of each and their ratios.
# Usage: benchmarks/seek.sh [count]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
count="${1:-100}"
clip=$(bench_clip 1080p30-h264-60s-g250.mp4 60 250)
swift build -c release --product PlayheadBench 2>&1 | grep -E "error:" && exit 1
bench="$(swift build -c release --show-bin-path)/PlayheadBench"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bench" seeks "$clip" --count "$count" --seed 7 > "$tmp/playhead.json"
python3 - "$tmp/playhead.json" "$clip" <<'PY'
import json, subprocess, sys, time, statistics
ours = json.load(open(sys.argv[1]))
clip = sys.argv[2]
theirs = []
for t in ours["times"]:
    start = time.perf_counter()
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-ss", f"{t:.3f}", "-i", clip, "-frames:v", "1",
                    "-pix_fmt", "rgb24", "-f", "null", "-"], check=True)
    theirs.append(time.perf_counter() - start)
def p95(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
om, op, fm, fp = statistics.median(ours["seconds"]), p95(ours["seconds"]), statistics.median(theirs), p95(theirs)
print(f"{len(theirs)} exact seeks, time to the first frame: playhead median {om*1000:.0f} ms, p95 {op*1000:.0f} ms; "
      f"ffmpeg -ss per seek median {fm*1000:.0f} ms, p95 {fp*1000:.0f} ms; ratio median {fm/om:.2f}x, p95 {fp/op:.2f}x")
PY
