#!/usr/bin/env bash
# Benchmark (issue: the compositor): the 3-layer composition — a 2 s background looping to fill a
# 1280x720 canvas, and two 6 s clips (4:3, and anamorphic 16:9) aspect-fit side by side — at
# 30 fps for 6 s, against the equivalent ffmpeg -filter_complex (fps, scale, overlay), in one run:
# to Y4M on /dev/null (target ≥ 1.3×) and to MP4 files with the same x264 preset and CRF
# (target ≥ 1.0×). Prints times and ratios.
# Usage: benchmarks/compose.sh [runs]      (installs what is missing, builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-5}"
make() { [ -f ".bench/$1" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i "$2" -c:v libx264 -preset fast -crf 20 -pix_fmt yuv420p "${@:3}" ".bench/$1"; }
make compose-bg.mp4 "testsrc2=size=1280x720:rate=30:duration=2" -g 30
make compose-4x3.mp4 "testsrc=size=640x480:rate=30:duration=6" -g 60
make compose-anamorphic.mp4 "mandelbrot=size=720x480:rate=30,trim=duration=6" -g 60 -vf setsar=32/27
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
layers=(--layer "x=0,y=0,w=1280,h=720,gravity=aspect-fill,loop=forever,source=.bench/compose-bg.mp4"
        --layer "x=40,y=180,w=580,h=360,z=1,source=.bench/compose-4x3.mp4"
        --layer "x=660,y=180,w=580,h=360,z=1,source=.bench/compose-anamorphic.mp4")
printf -v playhead_layers '%q ' "${layers[@]}"
graph="[0:v]fps=30,scale=1280:720,setsar=1[bg];[1:v]fps=30,scale=480:360,setsar=1[l];[2:v]fps=30,scale=580:326,setsar=1[r];"
graph+="[bg][l]overlay=x=90:y=180:eof_action=repeat[t];[t][r]overlay=x=660:y=196:eof_action=repeat,format=yuv420p[out]"
ffmpeg_cmd="ffmpeg -v error -y -stream_loop -1 -i .bench/compose-bg.mp4 -i .bench/compose-4x3.mp4 -i .bench/compose-anamorphic.mp4 -filter_complex '$graph' -map '[out]' -frames:v 180"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/result.json" \
  -n playhead-y4m "$bin compose --size 1280x720 --rate 30 --duration 6 $playhead_layers --out - >/dev/null 2>&1" \
  -n ffmpeg-y4m "$ffmpeg_cmd -f yuv4mpegpipe /dev/null" \
  -n playhead-mp4 "rm -rf $tmp/c; $bin compose --size 1280x720 --rate 30 --duration 6 $playhead_layers --format mp4 --preset veryfast --crf 23 --out $tmp/c >/dev/null 2>&1" \
  -n ffmpeg-mp4 "$ffmpeg_cmd -c:v libx264 -preset veryfast -crf 23 -g 30 $tmp/d.mp4"

frames=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$tmp/c/composition/video.mp4")
python3 - "$tmp/result.json" "$frames" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"3-layer 1280x720 composition, 6 s at 30 fps ({sys.argv[2]} frames in the MP4):")
print(f"  to Y4M: playhead {r['playhead-y4m']:.2f} s, ffmpeg {r['ffmpeg-y4m']:.2f} s: {r['ffmpeg-y4m'] / r['playhead-y4m']:.2f}× (target ≥ 1.3×)")
print(f"  to MP4: playhead {r['playhead-mp4']:.2f} s, ffmpeg {r['ffmpeg-mp4']:.2f} s: {r['ffmpeg-mp4'] / r['playhead-mp4']:.2f}× (target ≥ 1.0×)")
PY

# Realtime: four 720p30 clips in a 2x2 grid on a 1280x720 canvas for 30 s on the machine's clock
# (target: 0 late frames, p99 lateness < 5 ms on 2 cores).
make compose-720p.mp4 "testsrc2=size=1280x720:rate=30:duration=10" -g 60
rm -rf "$tmp/rt"
"$bin" compose --realtime --size 1280x720 --rate 30 --duration 30 --format none --out "$tmp/rt" --json \
  --layer "x=0,y=0,w=640,h=360,loop=forever,source=.bench/compose-720p.mp4" \
  --layer "x=640,y=0,w=640,h=360,loop=forever,source=.bench/compose-720p.mp4" \
  --layer "x=0,y=360,w=640,h=360,loop=forever,source=.bench/compose-720p.mp4" \
  --layer "x=640,y=360,w=640,h=360,loop=forever,source=.bench/compose-720p.mp4" > "$tmp/rt.json"
python3 - "$tmp/rt.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p99 = s.get("latenessP99")
print(f"realtime 4 x 720p30 in 1280x720, 30 s: {s['framesWritten']} frames in {s['elapsed']:.2f} s, "
      f"{s['lateFrames']} late (target 0), p99 lateness {1000 * (p99 or 0):.2f} ms (target < 5 ms)")
PY
