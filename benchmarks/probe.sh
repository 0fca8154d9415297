#!/usr/bin/env bash
# Benchmark: probing 100 files with one `playhead probe --json` against running ffprobe 100
# times (one after another, as a shell loop does). Prints both times and the ratio.
# Usage: benchmarks/probe.sh [runs]      (installs what is missing, builds release)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
runs="${1:-10}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
work="$tmp/media"
mkdir -p "$work"

# 100 files: copies of the good sample clips, round-robin.
clips=()
for c in SampleMedia/*; do case "$c" in *bad-*|*.sh|*.md|*/expected) ;; *) clips+=("$c");; esac; done
for i in $(seq -w 1 100); do
  src="${clips[$((10#$i % ${#clips[@]}))]}"
  cp "$src" "$work/$i-$(basename "$src")"
done

hyperfine --warmup 2 --runs "$runs" --export-json "$tmp/result.json" \
  -n playhead "$bin probe --json $work/* > /dev/null" \
  -n ffprobe-x100 "for f in $work/*; do ffprobe -v error -show_format -show_streams -of json \"\$f\" > /dev/null; done"

# Bad files, alone: each must be reported failed within a second.
bad=(SampleMedia/bad-*.mp4 "$work/missing.mp4" SampleMedia)
start=$(date +%s.%N)
"$bin" probe --json "${bad[@]}" > "$tmp/bad.json" || true
end=$(date +%s.%N)
python3 - "$tmp/bad.json" "$start" "$end" <<'PY'
import json, sys
assets = json.load(open(sys.argv[1]))["assets"]
failed = sum(1 for a in assets if a["status"] == "failed")
print(f"bad inputs: {failed} of {len(assets)} reported failed in {float(sys.argv[3]) - float(sys.argv[2]):.3f} s in all")
PY

python3 - "$tmp/result.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
p, f = r["playhead"]["mean"], r["ffprobe-x100"]["mean"]
print(f"probe 100 files: playhead {p*1000:.0f} ms, ffprobe x100 {f*1000:.0f} ms, speed-up {f/p:.1f}x")
PY
