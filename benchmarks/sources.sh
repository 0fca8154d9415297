#!/usr/bin/env bash
# Benchmark (issue: sources): the 60 s 1080p clip served from a loopback HTTP server with range
# requests (benchmarks/range_server.py, which counts the body bytes it sends), in one run:
# - `play --format none` over HTTP against the same command on the local file (target ≥ 0.95×),
#   and ffmpeg decoding the same URL to null;
# - bytes sent for `probe` (target ≤ 5% of the file), for 10 keyframe thumbnails (`--tolerance`,
#   target ≤ 15%) and for 10 exact ones, beside ffprobe and ten `ffmpeg -ss T -i URL -frames:v 1`,
#   from a server with 256 KB in flight per connection (what a loaded server on a real network has).
# Usage: benchmarks/sources.sh [runs]      (installs what is missing, builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-5}"
clip=$(bench_clip 1080p30-h264-60s-g250.mp4 60 250)
tmp="$(mktemp -d)"
python3 benchmarks/range_server.py "$(dirname "$clip")" "$tmp/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$tmp/port")"
url="$base/$(basename "$clip")"
size=$(stat -c %s "$clip")

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/play.json" \
  -n file "$bin play --format none --out $tmp/o1 $clip >/dev/null 2>&1; rm -rf $tmp/o1" \
  -n http "$bin play --format none --out $tmp/o2 $url >/dev/null 2>&1; rm -rf $tmp/o2" \
  -n ffmpeg-http "ffmpeg -v error -threads 0 -i $url -an -f null -"

# bytes NAME COMMAND…: runs the command, records the body bytes the server sent for it.
bytes() {
  local name="$1"; shift
  curl -s "$base/__reset" >/dev/null
  "$@" >/dev/null 2>&1
  echo "$name $(curl -s "$base/__stats")" >> "$tmp/bytes.txt"
}
times=$(python3 -c "print(' '.join(f'{(i + 0.5) * 6:.1f}' for i in range(10)))")
bytes playhead-probe "$bin" probe "$url"
bytes ffprobe ffprobe -v error -show_format -show_streams "$url"
bytes playhead-thumbnails-keyframe "$bin" thumbnails --count 10 --tolerance 5 --out "$tmp/t1" "$url"
# ffmpeg's input -ss decodes up to the time unless told not to (-noaccurate_seek: the keyframe).
ffmpeg_thumbs() { for t in $times; do ffmpeg -v error -y "$@" -ss "$t" -i "$url" -frames:v 1 "$tmp/f-$t.png"; done; }
bytes ffmpeg-thumbnails-keyframe ffmpeg_thumbs -noaccurate_seek
bytes playhead-thumbnails-exact "$bin" thumbnails --count 10 --out "$tmp/t2" "$url"
bytes ffmpeg-thumbnails-exact ffmpeg_thumbs

python3 - "$tmp/play.json" "$tmp/bytes.txt" "$size" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"play --format none, 60 s 1080p: file {r['file']:.2f} s, http {r['http']:.2f} s "
      f"(http/file speed {r['file'] / r['http']:.2f}×, target ≥ 0.95×); ffmpeg over http {r['ffmpeg-http']:.2f} s "
      f"(playhead {r['ffmpeg-http'] / r['http']:.2f}× ffmpeg)")
size = int(sys.argv[3])
for line in open(sys.argv[2]):
    name, stats = line.split(" ", 1)
    s = json.loads(stats)
    target = {"playhead-probe": " (target ≤ 5%)", "playhead-thumbnails-keyframe": " (target ≤ 15%)"}.get(name, "")
    print(f"{name}: {s['bytes'] / 1e6:.2f} MB sent in {s['requests']} requests = {100 * s['bytes'] / size:.1f}% of the file{target}")
PY
