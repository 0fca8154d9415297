#!/usr/bin/env bash
# Benchmark (issue: output safety, bounded memory): peak resident memory of
# `thumbnails --count N --size 1280x720` (no sheet) for N = 10, 100 and 400 on a 60 s 1080p30 clip,
# against ffmpeg writing the same 400 images in one run (`fps` filter + `scale`): memory must not
# grow with the number of images (target: 400 images at most 1.3 x the peak of 10). Also the
# contact sheet, which is drawn a row at a time. Prints peaks and ratios.
# Usage: benchmarks/memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
clip=$(bench_clip 1080p30-h264-60s-g250.mp4 60 250)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

peak() { # peak RSS in KiB of the command given
  /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1
  tail -1 "$tmp/rss"
}
p10=$(peak "$bin" thumbnails --out "$tmp/a" --count 10 --size 1280x720 "$clip")
p100=$(peak "$bin" thumbnails --out "$tmp/b" --count 100 --size 1280x720 "$clip")
p400=$(peak "$bin" thumbnails --out "$tmp/c" --count 400 --size 1280x720 "$clip")
sheet=$(peak "$bin" thumbnails --out "$tmp/d" --count 400 --size 160x90 --sheet --overview "$clip" "$clip")
mkdir -p "$tmp/ff"
ff=$(peak ffmpeg -hide_banner -loglevel error -y -i "$clip" -vf "fps=400/60,scale=1280:720" "$tmp/ff/%04d.png")
written=$(ls "$tmp/c/01-$(basename "$clip")" | grep -c '^thumb-')

python3 - "$p10" "$p100" "$p400" "$sheet" "$ff" "$written" <<'PY'
import sys
p10, p100, p400, sheet, ff, written = (int(x) for x in sys.argv[1:])
mib = lambda k: f"{k / 1024:.0f} MiB"
print(f"thumbnails 1280x720: 10 images {mib(p10)}, 100 images {mib(p100)}, 400 images {mib(p400)} ({written} written)")
print(f"400 / 10 images: {p400 / p10:.2f}x (target <= 1.3)")
print(f"contact sheet, 2 files x 400 cells of 160x90: {mib(sheet)}")
print(f"ffmpeg, the same 400 images in one run: {mib(ff)} (playhead / ffmpeg: {p400 / ff:.2f}x)")
PY
