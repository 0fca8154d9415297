#!/usr/bin/env bash
# Benchmark (issue: the player model): realtime playback on the real clock.
#   1. one 5 s clip (1080p30 H.264): wall time against 5 s, and presentation lateness (p99);
#   2. a queue of two such clips: total time against 10 s, so a transition's cost shows as the
#      difference (it should stay under one frame interval, 33 ms);
#   3. the same two with a stereo AAC track, the audio as master clock: time, drops, resyncs, and
#      the WAV holding exactly twice one clip's samples (no gap or overlap at the transition).
# Usage: benchmarks/realtime.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
clip=$(bench_clip 1080p30-h264-5s.mp4 5 60)
avclip=$(bench_av_clip 1080p30-h264-aac-5s.mp4 5)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$bin" play --queue --realtime --format none --out "$tmp/one" "$clip" 2>/dev/null
"$bin" play --queue --realtime --format none --out "$tmp/two" "$clip" "$clip" 2>/dev/null

"$bin" play --queue --format none --out "$tmp/avonce" "$avclip" 2>/dev/null
"$bin" play --queue --realtime --format png --size 64x36 --out "$tmp/av" "$avclip" "$avclip" 2>/dev/null

python3 - "$tmp/one/summary.json" "$tmp/two/summary.json" "$tmp/avonce/summary.json" "$tmp/av/summary.json" <<'PY'
import json, sys
frame = 1 / 30
for path, clips in [(sys.argv[1], 1), (sys.argv[2], 2)]:
    s = json.load(open(path))
    q = s["queue"]
    # The last frame is due (frames - 1) intervals after the first; add one interval for its display.
    shown = s["elapsed"]
    expected = 5.0 * clips
    print(f"{clips} x 5 s clip: {shown:.3f} s elapsed (expected {expected:.3f} s incl. opening: {100 * (shown - expected) / expected:+.2f}%), "
          f"presented {q['framesPresented']}, dropped {q['framesDropped']}, lateness p99 {1000 * (q['latenessP99'] or 0):.2f} ms")
one = json.load(open(sys.argv[1]))["elapsed"]
two = json.load(open(sys.argv[2]))["elapsed"]
print(f"transition cost: {1000 * (two - 2 * one):+.1f} ms (one frame interval is {1000 * frame:.1f} ms)")
once = json.load(open(sys.argv[3]))["queue"]["audioFrames"]
av = json.load(open(sys.argv[4]))
q = av["queue"]
print(f"2 x 5 s clip with audio (audio master): {av['elapsed']:.3f} s elapsed, presented {q['framesPresented']}, dropped {q['framesDropped']}, "
      f"audio resyncs {q['audioResyncs']}, audio.wav {q['audioFrames']} samples per channel = {q['audioFrames'] / once:.4f} x one clip's {once}")
PY
