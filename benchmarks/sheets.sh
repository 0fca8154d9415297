#!/usr/bin/env bash
# Benchmark (issue: contact sheets): a 4x4 contact sheet with a header and a time on every
# picture, JPEG, of a 60 s 1080p30 file with sound, and of ten such files, against vcsi (the
# contact-sheet tool people use; it runs ffmpeg once per picture, accurate seeks, and draws with
# Pillow): `vcsi -g 4x4 -t -w 1500` (1500 wide: cells of about 360x203) beside
# `playhead thumbnails --count 16 --size 360x203 --sheet --sheet-format jpeg` (exact times).
# Also the peak memory of playhead for one file, ten and thirty (four at a time, the default: from
# four files on it must stay flat, each file's pictures let go once its sheet is written). Prints times, ratios (target >= 3x) and peaks.
# vcsi is installed into .bench/vcsi (a Python venv) when it is not on the PATH.
# Usage: benchmarks/sheets.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-3}"
clip=$(bench_av_clip 1080p30-av-60s.mp4 60)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

vcsi=$(command -v vcsi || true)
if [ -z "$vcsi" ]; then
  if [ ! -x .bench/vcsi/bin/vcsi ]; then
    python3 -m venv .bench/vcsi 2>/dev/null || { apt_install_missing benchmarks python3-venv; python3 -m venv .bench/vcsi; }
    .bench/vcsi/bin/pip install --quiet vcsi
  fi
  vcsi=.bench/vcsi/bin/vcsi
fi

mkdir -p "$tmp/ten" "$tmp/thirty"
for i in $(seq -w 1 30); do ln "$clip" "$tmp/thirty/clip-$i.mp4"; done
for i in $(seq -w 1 10); do ln "$clip" "$tmp/ten/clip-$i.mp4"; done
ten=$(ls "$tmp"/ten/*.mp4 | tr '\n' ' ')
thirty=$(ls "$tmp"/thirty/*.mp4 | tr '\n' ' ')
mkdir -p "$tmp/v10"

sheet="--count 16 --size 360x203 --sheet --sheet-format jpeg"
hyperfine --runs "$runs" --export-json "$tmp/one.json" \
  -n playhead --prepare "rm -rf $tmp/p1" "$bin thumbnails --out $tmp/p1 $sheet $clip" \
  -n vcsi "$vcsi $clip -g 4x4 -t -w 1500 -o $tmp/v1.jpg" > /dev/null
hyperfine --runs 1 --export-json "$tmp/ten.json" \
  -n playhead --prepare "rm -rf $tmp/p10" "$bin thumbnails --out $tmp/p10 $sheet $ten" \
  -n vcsi "$vcsi $ten -g 4x4 -t -w 1500 -o $tmp/v10/" > /dev/null

peak() { # peak RSS in KiB of the command given
  /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1
  tail -1 "$tmp/rss"
}
# Peak memory varies by a few tens of MiB from run to run (when the four sessions' decoders
# overlap): three runs of each, the median compared.
rss() { # rss NAME FILES...: three peaks (KiB) of a run over FILES
  local name=$1
  shift
  for _ in 1 2 3; do
    rm -rf "$tmp/$name"
    # shellcheck disable=SC2086
    peak "$bin" thumbnails --out "$tmp/$name" $sheet "$@"
  done | tr '\n' ' '
}
# shellcheck disable=SC2086
rss1=$(rss p1 "$clip")
# shellcheck disable=SC2086
rss10=$(rss p10 $ten)
# shellcheck disable=SC2086
rss30=$(rss p30 $thirty)
sheets=$(ls "$tmp"/p10/*/sheet.jpg "$tmp"/p30/*/sheet.jpg | wc -l)

python3 - "$tmp/one.json" "$tmp/ten.json" "$rss1" "$rss10" "$rss30" "$sheets" <<'PY'
import json, sys
for name, path in [("one file", sys.argv[1]), ("ten files", sys.argv[2])]:
    r = {x["command"]: x["mean"] for x in json.load(open(path))["results"]}
    print(f"{name}: playhead {r['playhead']:.2f} s, vcsi {r['vcsi']:.2f} s, speed-up {r['vcsi'] / r['playhead']:.2f}x (target >= 3)")
import statistics
one, ten, thirty = ([int(x) / 1024 for x in arg.split()] for arg in sys.argv[3:6])
show = lambda runs: f"{min(runs):.0f}-{max(runs):.0f} MiB (median {statistics.median(runs):.0f})"
print(f"peak RSS over three runs: one file {show(one)}, ten files {show(ten)}, thirty files {show(thirty)}; "
      f"median thirty / ten {statistics.median(thirty) / statistics.median(ten):.2f} (flat: about 1); {sys.argv[6]} of 40 sheets written")
PY
