#!/usr/bin/env python3
"""Check that a decode with one frame dropped matches the intact decode minus that frame.

usage: compare_frames.py ORIGINAL.raw DAMAGED.raw FRAME_BYTES DROPPED_INDEX

Both files are headerless raw video (ffmpeg -f rawvideo, the same pixel format and size),
FRAME_BYTES per frame. Passes (exit 0) when DAMAGED holds exactly the ORIGINAL frames
except frame DROPPED_INDEX (0-based), byte for byte and in order.
"""
import sys


def frames(path, n):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % n:
        sys.exit("%s: %d bytes is not a whole number of %d-byte frames" % (path, len(data), n))
    return [data[i:i + n] for i in range(0, len(data), n)]


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    n, drop = int(argv[3]), int(argv[4])
    orig, damaged = frames(argv[1], n), frames(argv[2], n)
    want = orig[:drop] + orig[drop + 1:]
    same = sum(a == b for a, b in zip(want, damaged))
    print("original %d frames, damaged %d frames; %d of the %d expected frames identical"
          % (len(orig), len(damaged), same, len(want)))
    if len(damaged) != len(want) or same != len(want):
        bad = [i for i, (a, b) in enumerate(zip(want, damaged)) if a != b]
        print("MISMATCH: differing frames (index in the damaged decode): %s" % bad[:20])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
