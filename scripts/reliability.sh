#!/usr/bin/env bash
# Reliability checks, each printing counts:
#   corpus  the hostile corpus through `playhead probe` and `playhead play`, file by file (a crash
#           or a hang is counted) and all at once (must exit 1 and report every file)
#   tsan    the test suite under ThreadSanitizer
#   asan    the test suite under AddressSanitizer
# Usage: scripts/reliability.sh [corpus|tsan|asan|all]   (default: corpus)
set -euo pipefail
cd "$(dirname "$0")/.."

corpus() {
  scripts/setup.sh debug >/dev/null
  local bin; bin="$(swift build --show-bin-path)/playhead"
  local dir; dir="$(mktemp -d)"
  scripts/hostile-corpus.sh "$dir/corpus" >/dev/null
  local files=("$dir"/corpus/* "$dir/corpus/missing.mp4")
  local tried=0 crashes=0 hangs=0 rc
  for f in "${files[@]}"; do
    for command in "probe" "play --format none --out $dir/out"; do
      tried=$((tried + 1))
      set +e; timeout 30 $bin $command "$f" >/dev/null 2>&1; rc=$?; set -e
      case $rc in
        0|1) ;;
        124) hangs=$((hangs + 1)); echo "HANG: playhead $command $f" ;;
        *) crashes=$((crashes + 1)); echo "CRASH (exit $rc): playhead $command $f" ;;
      esac
    done
  done
  set +e
  timeout 120 $bin probe --json "${files[@]}" > "$dir/probe.json"; local probe_rc=$?
  timeout 300 $bin play --format none --json --out "$dir/out" "${files[@]}" > "$dir/play.json"; local play_rc=$?
  set -e
  python3 - "$dir/probe.json" "$dir/play.json" "${#files[@]}" <<'PY'
import json, sys
probe = json.load(open(sys.argv[1]))["assets"]; play = json.load(open(sys.argv[2]))["files"]; n = int(sys.argv[3])
assert len(probe) == n and len(play) == n, "every file must be reported"
for entry in probe + play:
    if entry["status"] != "loaded" and entry["status"] != "completed":
        e = entry["error"]
        assert e["code"] and entry["path"].split("/")[-1] in e["message"], f"error must be typed and name the file: {entry}"
failed = sum(1 for e in play if e["status"] != "completed")
print(f"whole corpus: probe reported {len(probe)}, play reported {len(play)} ({failed} failed, {len(play) - failed} complete)")
PY
  echo "corpus: ${#files[@]} files, $tried runs, crashes $crashes, hangs $hangs; whole-corpus exit status: probe $probe_rc, play $play_rc"
  rm -rf "$dir"
  [ "$crashes" -eq 0 ] && [ "$hangs" -eq 0 ] && [ "$probe_rc" -eq 1 ] && [ "$play_rc" -eq 1 ]
}

sanitized() {
  scripts/setup.sh debug >/dev/null
  PLAYHEAD_TIME_SCALE=10 swift test --sanitize="$1" --scratch-path ".build-$1" 2>&1 | tee "/tmp/playhead-$1.log" | grep -E "Test run|WARNING|ERROR: AddressSanitizer|SUMMARY" || true
  local reports; reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "/tmp/playhead-$1.log" || true)
  echo "$1: $reports sanitizer reports (full log: /tmp/playhead-$1.log)"
  [ "$reports" -eq 0 ]
}

case "${1:-corpus}" in
  corpus) corpus ;;
  tsan) sanitized thread ;;
  asan) sanitized address ;;
  all) corpus; sanitized thread; sanitized address ;;
  *) echo "usage: scripts/reliability.sh [corpus|tsan|asan|all]" >&2; exit 2 ;;
esac
