#!/usr/bin/env bash
# Soak (issue: playout): a 720p25 channel in real time for MINUTES (default 10) — a looping
# background and a playlist zone with sound, to HLS and a recording — sampled every 30 s from its
# status endpoint and /proc: late frames and p99 lateness, resident memory and threads at the
# start and at the end (flat), the sound/picture offset at the end (≤ 1 ms).
# Usage: benchmarks/playout-soak.sh [minutes]      (installs what is missing, builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
minutes="${1:-10}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bg=$(bench_av_clip soak-bg.mp4 10)
mkdir -p "$tmp/hls"
cat > "$tmp/channel.json" <<JSON
[{"name": "background", "source": "$PWD/$bg", "rect": [0, 0, 1280, 720], "gravity": "aspect-fill", "loop": "forever"},
 {"name": "zone", "sources": ["$PWD/SampleMedia/h264-aac.mp4", "$PWD/SampleMedia/stereo-44k.mp4", "$PWD/SampleMedia/4x3.mp4"],
  "rect": [640, 360, 600, 340], "z": 1, "loop": "forever", "audio": true}]
JSON
port=18932
"$bin" playout --layout "$tmp/channel.json" --size 1280x720 --rate 25 --duration $((minutes * 60)) --out "$tmp/hls/live.m3u8" --out "$tmp/rec.ts" \
  --status 127.0.0.1:$port --as-run "$tmp/as-run.jsonl" 2>"$tmp/log" &
pid=$!
sample() {
  local rss threads
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  threads=$(awk '/Threads/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  echo "$1 $rss $threads $(curl -s 127.0.0.1:$port/status | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["framesOut"], s["lateFrames"], s.get("latenessP99") or 0, s["soundPictureOffset"])' 2>/dev/null || echo "0 0 0 0")"
}
sleep 30
sample start > "$tmp/samples"
for _ in $(seq 2 $((minutes * 2 - 1))); do sleep 30; sample at >> "$tmp/samples"; done
sample end >> "$tmp/samples"
wait $pid || true
python3 - "$tmp/samples" "$minutes" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1])]
first, last = rows[0], rows[-1]
print(f"{sys.argv[2]}-minute 720p25 soak: {last[3]} frames, {last[4]} late, p99 lateness {1000 * float(last[5]):.2f} ms")
print(f"  resident memory {int(first[1]) // 1024} MiB at 30 s, {int(last[1]) // 1024} MiB at the end; threads {first[2]} then {last[2]}")
print(f"  sound/picture offset at the end {1000 * float(last[6]):.3f} ms (target ≤ 1 ms)")
PY
