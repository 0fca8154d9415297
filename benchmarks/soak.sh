#!/usr/bin/env bash
# Soak (issue: output safety, statistics that grow forever): `play --loop forever --realtime` on a
# short clip with audio for MINUTES (default 10), sampling the process's resident memory and CPU
# time every 5 s. Prints RSS and CPU per presented frame in the first and the last minute: both
# must stay flat (realtime presents the clip's frame rate, so CPU per minute is CPU per 1,800
# frames at 30 fps). Ended by SIGINT, whose summary gives the frames played.
# Usage: benchmarks/soak.sh [minutes]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
minutes="${1:-10}"
clip=$(bench_av_clip 1080p30-h264-aac-5s.mp4 5)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$bin" play --loop forever --realtime --format none --out "$tmp/out" "$clip" 2>/dev/null &
pid=$!
python3 - "$pid" "$minutes" "$tmp/samples" <<'PY'
import os, sys, time
pid, minutes, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
tick = os.sysconf("SC_CLK_TCK")
start = time.monotonic()
with open(out, "w") as f:
    while time.monotonic() - start < minutes * 60:
        try:
            rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except (OSError, StopIteration):
            sys.exit(f"the soak process ended early")
        cpu = (int(fields[11]) + int(fields[12])) / tick
        f.write(f"{time.monotonic() - start:.1f} {rss} {cpu:.2f}\n")
        f.flush()
        time.sleep(5)
PY
kill -INT "$pid"
set +e; wait "$pid"; status=$?; set -e

python3 - "$tmp/samples" "$tmp/out/summary.json" "$status" "$minutes" <<'PY'
import json, sys
samples = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
summary = json.load(open(sys.argv[2]))
status, minutes = int(sys.argv[3]), float(sys.argv[4])
f = summary["files"][0]
presented, elapsed = f["framesDecoded"], summary["elapsed"]
rate = presented / elapsed
def window(a, b):
    w = [s for s in samples if a <= s[0] <= b]
    return w[0], w[-1]
first = window(0, 65)
last = window(samples[-1][0] - 65, samples[-1][0])
def line(name, w):
    (t0, r0, c0), (t1, r1, c1) = w
    frames = rate * (t1 - t0)
    return f"{name}: RSS {r0 / 1024:.1f} -> {r1 / 1024:.1f} MiB, CPU {1000 * (c1 - c0) / frames:.3f} ms per frame"
print(f"soak {minutes:g} min, exit {status} ({summary['state']}), {presented} frames ({rate:.2f}/s), "
      f"{f.get('loopsCompleted')} loops")
print(line("first minute", first))
print(line("last minute ", last))
print("RSS at each minute: " + ", ".join(f"{r / 1024:.0f}" for t, r, c in samples if int(t) % 60 < 5 and t >= 55) + " MiB")
print(f"RSS last / first minute end: {last[1][1] / first[1][1]:.3f}x; CPU per frame last / first: "
      f"{((last[1][2] - last[0][2]) / (last[1][0] - last[0][0])) / ((first[1][2] - first[0][2]) / (first[1][0] - first[0][0])):.3f}x")
PY
