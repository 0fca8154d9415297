#!/usr/bin/env bash
# Benchmark (issue: playout): a composed channel on the virtual clock and in real time.
# 1. Virtual hours (default 24) of a 4 s background with a flash on frame 25k and a beep on second k,
#    looping under a playlist zone, recorded to MPEG-TS: exactly hours × 3600 × 25 frames, the
#    sound as long as the picture, every flash on frame 25k and every beep within 1 ms of where the
#    background has it (no drift across the seams), and the render speed.
# 2. Speed: a 1080p25 channel — a looping background and two zones with sound — for 60 s on the
#    virtual clock, against the same picture and mix from one ffmpeg filter graph (-stream_loop -1
#    inputs, scale, overlay, amix; libx264 veryfast zerolatency, AAC) in one run (target ≥ 1.2×).
# 3. The same channel in real time for 40 s: the share of the machine it takes (target ≤ 50 %), over the
#    run and from 12 s on (every loop past its first pass), with the loop cache (default) and without.
# Usage: benchmarks/playout.sh [hours]      (installs what is missing, builds release; 0 hours: parts 2 and 3 only)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
hours="${1:-24}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# 1. Virtual hours (0: skip to the 1080p channel).
if [ "$hours" -gt 0 ]; then
ffmpeg -hide_banner -loglevel error -y -f lavfi -i "color=c=black:s=64x36:r=25:d=4,geq=lum='if(eq(mod(N\,25)\,0)\,235\,16)':cb=128:cr=128" \
  -f lavfi -i "sine=frequency=1000:sample_rate=48000:duration=4" -filter_complex "[1:a]volume=volume=0:enable='gte(mod(t\,1)\,0.05)'[a]" \
  -map 0:v -map "[a]" -c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv420p -c:a aac "$tmp/background.mp4"
cat > "$tmp/channel.json" <<JSON
[{"name": "background", "source": "background.mp4", "rect": [0, 0, 64, 36], "loop": "forever", "audio": true},
 {"name": "zone", "sources": ["$PWD/SampleMedia/h264-aac.mp4", "$PWD/SampleMedia/4x3.mp4"], "rect": [32, 0, 32, 36], "z": 1, "loop": "forever"}]
JSON
seconds=$((hours * 3600))
start=$(date +%s.%N)
"$bin" playout --layout "$tmp/channel.json" --size 64x36 --rate 25 --clock virtual --duration "$seconds" --out "$tmp/long.ts" 2>/dev/null
end=$(date +%s.%N)
python3 - "$tmp/long.ts" "$tmp/background.mp4" "$seconds" "$start" "$end" <<'PY'
import subprocess, sys, numpy
path, background, seconds, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
def starts(p):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", p], capture_output=True, text=True).stdout
    d = {}
    for line in out.split():
        f = line.split(",")
        if len(f) == 2 and f[0] not in d: d[f[0]] = float(f[1])
    return d.get("video", 0) - d.get("audio", 0)
def onsets(p):
    # The sound at 8 kHz mono, streamed: each sample over 2000 after half a second of quiet.
    proc = subprocess.Popen(["ffmpeg", "-v", "error", "-i", p, "-map", "0:a", "-ac", "1", "-ar", "8000", "-f", "s16le", "-"], stdout=subprocess.PIPE)
    found, last, index = [], -1, 0
    while True:
        chunk = proc.stdout.read(1 << 22)
        if not chunk: break
        samples = numpy.frombuffer(chunk[: len(chunk) // 2 * 2], dtype="<i2").astype(numpy.int32)
        loud = numpy.nonzero(numpy.abs(samples) > 2000)[0] + index
        if len(loud):
            gaps = loud - numpy.concatenate(([last], loud[:-1])) - 1
            found.extend((loud[gaps >= 4000] / 8000).tolist())
            last = int(loud[-1])
        index += len(samples)
    return found, index / 8000
proc = subprocess.Popen(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-vf", "crop=32:36:0:0,scale=4:4", "-pix_fmt", "gray", "-f", "rawvideo", "-"], stdout=subprocess.PIPE)
frames, flashes_off, flashes = 0, 0, 0
while True:
    block = proc.stdout.read(16 * 65536)
    if not block: break
    bright = numpy.frombuffer(block, dtype=numpy.uint8).reshape(-1, 16).mean(axis=1) > 128
    due = (numpy.arange(frames, frames + len(bright)) % 25) == 0
    flashes += int(bright.sum())
    flashes_off += int((bright != due).sum())
    frames += len(bright)
lead = starts(path)
beeps, sound = onsets(path)
source, _ = onsets(background)
frac = lambda t: t - int(t)
expected = [frac(t - starts(background)) for t in source]
worst = max((abs(frac(t - lead) - expected[int(t - lead) % 4 - 1]) for t in beeps if int(t - lead) % 4), default=1)
drift = max((abs(frac(a - lead) - frac(b - lead)) for a, b in zip(beeps, beeps[4:])), default=1)
print(f"{seconds / 3600:.0f} virtual hours rendered in {end - start:.0f} s ({seconds / (end - start):.0f}× real time):")
print(f"  frames {frames} (expected {seconds * 25}), flashes {flashes}, off frame 25k: {flashes_off}")
print(f"  beeps {len(beeps)} (expected {seconds - 1}), worst {worst * 1000:.2f} ms from the background's, drift pass to pass {drift * 1000:.2f} ms")
print(f"  sound {sound - lead:.3f} s for {frames / 25:.3f} s of picture")
PY

fi

# 2 and 3. A 1080p25 channel: background and two zones with sound.
bg=$(bench_av_clip playout-bg.mp4 8)
ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc=size=1280x720:rate=25:duration=6" -f lavfi -i "sine=frequency=330:sample_rate=48000:duration=6" \
  -c:v libx264 -preset fast -pix_fmt yuv420p -c:a aac -shortest "$tmp/a.mp4"
ffmpeg -hide_banner -loglevel error -y -f lavfi -i "mandelbrot=size=1280x720:rate=25,trim=duration=5" -f lavfi -i "sine=frequency=550:sample_rate=48000:duration=5" \
  -c:v libx264 -preset fast -pix_fmt yuv420p -c:a aac -shortest "$tmp/b.mp4"
cat > "$tmp/hd.json" <<JSON
[{"name": "background", "source": "$PWD/$bg", "rect": [0, 0, 1920, 1080], "gravity": "aspect-fill", "loop": "forever"},
 {"name": "left", "source": "$tmp/a.mp4", "rect": [80, 270, 800, 450], "z": 1, "loop": "forever", "audio": true},
 {"name": "right", "source": "$tmp/b.mp4", "rect": [1040, 270, 800, 450], "z": 1, "loop": "forever", "audio": true}]
JSON
graph="[0:v]fps=25,scale=1920:1080,setsar=1[bg];[1:v]scale=800:450,setsar=1[l];[2:v]scale=800:450,setsar=1[r];"
graph+="[bg][l]overlay=x=80:y=270[t];[t][r]overlay=x=1040:y=270,format=yuv420p[v];[1:a][2:a]amix=inputs=2:normalize=0[a]"
hyperfine --warmup 1 --runs 3 --export-json "$tmp/speed.json" \
  -n playhead "rm -f $tmp/p.ts; $bin playout --layout $tmp/hd.json --size 1920x1080 --rate 25 --clock virtual --duration 60 --out $tmp/p.ts 2>/dev/null" \
  -n "playhead --loop-cache 0" "rm -f $tmp/p.ts; $bin playout --layout $tmp/hd.json --size 1920x1080 --rate 25 --clock virtual --duration 60 --loop-cache 0 --out $tmp/p.ts 2>/dev/null" \
  -n ffmpeg "ffmpeg -v error -y -stream_loop -1 -i $bg -stream_loop -1 -i $tmp/a.mp4 -stream_loop -1 -i $tmp/b.mp4 -filter_complex '$graph' -map '[v]' -map '[a]' -t 60 -c:v libx264 -preset veryfast -tune zerolatency -crf 23 -g 50 -c:a aac $tmp/f.ts"
# Real time, 40 s: the share of the machine over the whole run, and from 12 s on (every loop past
# its first pass: what a channel running for days costs), its peak memory, late frames.
realtime() {
  rm -f "$tmp/rt.ts"
  /usr/bin/time -f "%U %S %e %M" -o "$tmp/time-$1" "$bin" playout --layout "$tmp/hd.json" --size 1920x1080 --rate 25 --duration 40 \
    --loop-cache "$1" --out "$tmp/rt.ts" --status 127.0.0.1:18931 2>/dev/null &
  local launcher=$! pid=""
  sleep 12
  pid=$(pgrep -P "$launcher" || true)
  local t0 w0 t1 w1
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat"); w0=$(date +%s.%N)
  sleep 26
  t1=$(awk '{print $14 + $15}' "/proc/$pid/stat"); w1=$(date +%s.%N)
  curl -s 127.0.0.1:18931/status > "$tmp/status-$1.json" || true
  wait "$launcher"
  echo "$t0 $w0 $t1 $w1 $(getconf CLK_TCK)" > "$tmp/steady-$1"
}
realtime 1024
realtime 0
python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
r = {x["command"]: x["mean"] for x in json.load(open(tmp + "/speed.json"))["results"]}
cores = os.cpu_count()
print(f"1080p25 channel (background + two zones with sound), 60 s on the virtual clock: playhead {r['playhead']:.2f} s, ffmpeg {r['ffmpeg']:.2f} s: "
      f"{r['ffmpeg'] / r['playhead']:.2f}× (target ≥ 1.2×); with --loop-cache 0 (every pass decoded) {r['playhead --loop-cache 0']:.2f} s: "
      f"{r['ffmpeg'] / r['playhead --loop-cache 0']:.2f}×")
for cache in ("1024", "0"):
    user, system, wall, peak = map(float, open(f"{tmp}/time-{cache}").read().split()[-4:])
    t0, w0, t1, w1, tick = map(float, open(f"{tmp}/steady-{cache}").read().split())
    path = f"{tmp}/status-{cache}.json"
    status = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
    print(f"in real time for 40 s, --loop-cache {cache}: {100 * (user + system) / wall / cores:.0f} % of {cores} cores over the run, "
          f"{100 * (t1 - t0) / tick / (w1 - w0) / cores:.0f} % from 12 s on (target ≤ 50 %); peak memory {peak / 1024:.0f} MiB "
          f"(loop cache {status.get('loopCacheBytes', 0) / 2**20:.0f} MiB); {status.get('lateFrames', '?')} late frames, "
          f"p99 lateness {1000 * (status.get('latenessP99') or 0):.2f} ms")
PY
