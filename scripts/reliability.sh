#!/usr/bin/env bash
# Reliability checks, each printing counts:
#   corpus  the hostile corpus through `playhead probe` and `playhead play`, file by file (a crash
#           or a hang is counted) and all at once (must exit 1 and report every file)
#   tsan    the test suite under ThreadSanitizer
#   asan    the test suite under AddressSanitizer
#   fuzz    the seeded mutation fuzzer with many cases (FUZZ_ITERATIONS, default 5000)
#   libfuzzer  libFuzzer on the PlayheadFuzz target, seeded with the sample clips (FUZZ_SECONDS, default 60)
#   soak    a clip looped 1000 times and 100 sessions cancelled mid-decode, resident memory compared
#   disk    playing into a 200 KiB tmpfs (needs root to mount): the session must fail with a clear
#           error, and no summary may claim success
# Usage: scripts/reliability.sh [corpus|tsan|asan|fuzz|libfuzzer|soak|disk|all]   (default: corpus)
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
  # Two passes, as scripts/test.sh: the realtime tests alone, so the others' load does not make them late.
  { PLAYHEAD_TIME_SCALE=10 swift test --sanitize="$1" --scratch-path ".build-$1" --skip RealtimeAudioTests 2>&1
    PLAYHEAD_TIME_SCALE=10 swift test --sanitize="$1" --scratch-path ".build-$1" --skip-build --filter RealtimeAudioTests 2>&1
  } | tee "/tmp/playhead-$1.log" | grep -E "Test run|WARNING|ERROR: AddressSanitizer|SUMMARY" || true
  local reports; reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "/tmp/playhead-$1.log" || true)
  echo "$1: $reports sanitizer reports (full log: /tmp/playhead-$1.log)"
  [ "$reports" -eq 0 ]
}

fuzz() {
  scripts/setup.sh debug >/dev/null
  PLAYHEAD_FUZZ_ITERATIONS="${FUZZ_ITERATIONS:-5000}" swift test --filter MutationFuzzTests 2>&1 | grep -E "Test run|✘|Fatal|crash"
}

libfuzzer() {
  scripts/setup.sh debug >/dev/null
  swift build -Xswiftc -sanitize=fuzzer -Xswiftc -DPLAYHEAD_FUZZ --product PlayheadFuzz --scratch-path .build-fuzz 2>&1 | tail -1
  local corpus; corpus="$(mktemp -d)"
  cp SampleMedia/h264-aac.mp4 SampleMedia/vp9-opus.webm SampleMedia/hevc-aac.mkv SampleMedia/4x3.mp4 "$corpus/"
  local rc=0
  "$PWD/.build-fuzz/debug/PlayheadFuzz" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="$corpus/" "$corpus" > "$corpus.log" 2>&1 || rc=$?
  grep -E "DONE|Done|ERROR|deadly|timeout" "$corpus.log" | tail -3
  echo "libfuzzer: exit status $rc (0: no crash, no hang); crash inputs, if any, are in $corpus/"
  [ "$rc" -eq 0 ]
}

soak() {
  scripts/setup.sh debug >/dev/null
  PLAYHEAD_SOAK=1 swift test --filter SoakTests 2>&1 | grep -E "Test run|✘|Fatal|RSS"
}

disk() {
  scripts/setup.sh debug >/dev/null
  local bin; bin="$(swift build --show-bin-path)/playhead"
  local dir; dir="$(mktemp -d)"
  if ! mount -t tmpfs -o size=200k tmpfs "$dir" 2>/dev/null; then
    echo "disk: cannot mount a tmpfs here (needs root): not checked"
    return 1
  fi
  set +e; "$bin" play --out "$dir/out" --size 320x180 SampleMedia/h264-aac.mp4 > "$dir.log" 2>&1; local rc=$?; set -e
  local claims=0
  if [ -f "$dir/out/summary.json" ] && grep -q '"completed"' "$dir/out/summary.json"; then claims=1; fi
  umount "$dir"
  grep -q "No space left on device" "$dir.log" && echo "disk: full disk reported: $(grep -m1 writeFailed "$dir.log" | cut -c1-160)"
  echo "disk: exit status $rc, summary claiming success: $claims"
  [ "$rc" -eq 1 ] && [ "$claims" -eq 0 ]
}

case "${1:-corpus}" in
  corpus) corpus ;;
  tsan) sanitized thread ;;
  asan) sanitized address ;;
  fuzz) fuzz ;;
  libfuzzer) libfuzzer ;;
  soak) soak ;;
  disk) disk ;;
  all) corpus; fuzz; libfuzzer; soak; disk; sanitized thread; sanitized address ;;
  *) echo "usage: scripts/reliability.sh [corpus|tsan|asan|fuzz|libfuzzer|soak|disk|all]" >&2; exit 2 ;;
esac
