#!/usr/bin/env bash
# Benchmark (issue 38's targets): writing a two-hour film's subtitle track as SubRip with
# `playhead subtitles` against `ffmpeg -map 0:s:0 out.srt`, and drawing subtitles into a 1080p
# picture (`playhead play --subtitles`) against ffmpeg's `subtitles` filter, in one run each.
# Prints both times and the ratios (ffmpeg's time / playhead's: above 1, playhead is faster).
# Usage: benchmarks/subtitles.sh [runs]      (installs what is missing, builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A two-hour film (a small picture: what the read costs is the container's packets) with a cue
# every 6 s (1200 cues), kept between runs.
film=".bench/two-hours-subtitled.mkv"
if [ ! -f "$film" ]; then
  python3 - "$tmp/film.srt" <<'PY'
import sys
def t(s): return "%02d:%02d:%02d,%03d" % (s // 3600, s // 60 % 60, s % 60, 0)
with open(sys.argv[1], "w") as f:
    for i in range(1200):
        f.write("%d\n%s --> %s\nLine %d of the film,\nsaid <i>twice</i>\n\n" % (i + 1, t(i * 6), t(i * 6 + 4), i + 1))
PY
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=320x180:rate=25:duration=7200" -i "$tmp/film.srt" \
    -map 0:v -map 1 -c:v libx264 -preset ultrafast -g 250 -c:s srt "$film"
fi
# Ten seconds of 1080p with a cue on screen most of the time.
hd="$(bench_clip subtitles-1080p.mp4 10 60)"
printf '1\n00:00:00,000 --> 00:00:04,000\nThe first line, drawn in\n\n2\n00:00:05,000 --> 00:00:09,500\nThe second <i>line</i>\n\n' > "$tmp/hd.srt"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/extract.json" \
  -n playhead "rm -rf $tmp/o && $bin subtitles --out $tmp/o $film 2> /dev/null" \
  -n ffmpeg "ffmpeg -hide_banner -loglevel error -y -i $film -map 0:s:0 $tmp/ref.srt"
cmp "$tmp/o/01-two-hours-subtitled.mkv/subtitles.srt" "$tmp/ref.srt" && echo "extraction: the same bytes as ffmpeg's"

hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/burn.json" \
  -n playhead "rm -rf $tmp/b && $bin play --out $tmp/b --format none --no-audio --subtitles $tmp/hd.srt $hd 2> /dev/null" \
  -n ffmpeg "ffmpeg -hide_banner -loglevel error -y -i $hd -vf subtitles=$tmp/hd.srt -f null -"

python3 - "$tmp/extract.json" "$tmp/burn.json" <<'PY'
import json, sys
for name, path in (("subtitle extraction (2 h, 1200 cues)", sys.argv[1]), ("burn-in (1080p30, 10 s)", sys.argv[2])):
    r = {x["command"]: x for x in json.load(open(path))["results"]}
    ours, theirs = r["playhead"]["mean"], r["ffmpeg"]["mean"]
    print(f"{name}: playhead {ours:.3f} s, ffmpeg {theirs:.3f} s, ratio {theirs / ours:.2f}x")
PY
