#!/usr/bin/env bash
# Benchmark (issue: decode sessions): on a 1080p H.264 clip, in one run,
#   1. decode only: `playhead play --format none` against `ffmpeg -i clip -map 0:v -f null -`
#   2. aspect-fit 640x360 PNG dumps against ffmpeg's scale+pad into PNG files
#   3. video and audio decode-only on a clip with a stereo AAC track (`--format none` decodes the
#      audio too) against `ffmpeg -i clip -f null -`, which decodes both
# and the peak memory (max RSS) of one playhead session. Prints ratios (ffmpeg time / playhead
# time: above 1 means playhead is faster).
# Usage: benchmarks/decode.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-5}"
clip=$(bench_clip 1080p30-h264-20s.mp4 20 250)
avclip=$(bench_av_clip 1080p30-h264-aac-20s.mp4 20)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ff" "$tmp/ph"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/decode.json" \
  -n playhead "$bin play --format none --out $tmp/ph $clip" \
  -n ffmpeg "ffmpeg -hide_banner -loglevel error -i $clip -map 0:v -f null -"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/png.json" \
  --prepare "rm -rf $tmp/ff/* $tmp/ph/*" \
  -n playhead "$bin play --size 640x360 --gravity aspect-fit --format png --out $tmp/ph $clip" \
  -n ffmpeg "ffmpeg -hide_banner -loglevel error -i $clip -vf 'scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2' $tmp/ff/out_%06d.png"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/av.json" \
  -n playhead "$bin play --format none --out $tmp/ph $avclip" \
  -n ffmpeg "ffmpeg -hide_banner -loglevel error -i $avclip -f null -"

rss_decode=$(/usr/bin/time -f %M "$bin" play --format none --out "$tmp/ph" "$clip" 2>&1 >/dev/null | tail -1)
rss_png=$(/usr/bin/time -f %M "$bin" play --size 640x360 --format png --out "$tmp/ph" "$clip" 2>&1 >/dev/null | tail -1)
rss_ffmpeg=$(/usr/bin/time -f %M ffmpeg -hide_banner -loglevel error -i "$clip" -map 0:v -f null - 2>&1 | tail -1)

python3 - "$tmp/decode.json" "$tmp/png.json" "$rss_decode" "$rss_png" "$rss_ffmpeg" "$tmp/av.json" <<'PY'
import json, sys
def ratio(path):
    r = {x["command"]: x["mean"] for x in json.load(open(path))["results"]}
    return r["ffmpeg"] / r["playhead"], r["playhead"], r["ffmpeg"]
for name, path, target in [("decode only (--format none)", sys.argv[1], 1.0), ("aspect-fit 640x360 PNG", sys.argv[2], 1.0),
                           ("video + audio decode only", sys.argv[6], 0.95)]:
    q, p, f = ratio(path)
    print(f"{name}: playhead {p:.2f} s, ffmpeg {f:.2f} s, throughput ratio {q:.2f} (target >= {target})")
print(f"peak RSS: playhead decode-only {int(sys.argv[3])/1024:.0f} MiB, playhead PNG {int(sys.argv[4])/1024:.0f} MiB, ffmpeg decode-only {int(sys.argv[5])/1024:.0f} MiB")
PY
