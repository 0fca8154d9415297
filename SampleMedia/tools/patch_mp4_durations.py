#!/usr/bin/env python3
"""Overwrite the duration fields of ISO-BMFF (MP4/MOV) header boxes.

Walks the box tree (it does not assume any box order) and sets the duration of every
mvhd / tkhd / mdhd box (and mehd with --mehd) to a value, by default the "unknown"
sentinel: all ones in the field's width (0xFFFFFFFF for version 0 boxes, which use 32-bit
durations; 0xFFFFFFFFFFFFFFFF for version 1 boxes).

    patch_mp4_durations.py IN OUT [--value N] [--no-mehd] [--quiet]

mehd (the movie-extends header of a fragmented file, when there is one) is patched too
unless --no-mehd is given. Only the duration bytes change; box sizes do not.

Library use:  patch_durations(data: bytearray, value=None, boxes=DEFAULT_BOXES) -> list of patches
"""
import argparse
import struct
import sys

# Boxes whose payload is only child boxes.
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf",
              b"mvex", b"moof", b"traf", b"udta", b"mfra"}
# Full boxes (version+flags first) that also hold child boxes after a fixed header.
CONTAINER_FULLBOX = {b"meta": 4}

# Offset of the duration field from the start of the payload (after the 8/16-byte box
# header), for version 0 and version 1, and the field width per version.
#   mvhd: ver/flags(4) ctime mtime timescale(4) duration
#   tkhd: ver/flags(4) ctime mtime track_ID(4) reserved(4) duration
#   mdhd: ver/flags(4) ctime mtime timescale(4) duration
#   mehd: ver/flags(4) fragment_duration
# ctime/mtime are 4 bytes in version 0 and 8 bytes in version 1.
DURATION_FIELDS = {
    b"mvhd": {0: (16, 4), 1: (24, 8)},
    b"tkhd": {0: (20, 4), 1: (32, 8)},
    b"mdhd": {0: (16, 4), 1: (24, 8)},
    b"mehd": {0: (4, 4), 1: (4, 8)},
}
DEFAULT_BOXES = (b"mvhd", b"tkhd", b"mdhd", b"mehd")


def iter_boxes(data, start, end, path=()):
    """Yield (path, type, box_start, payload_start, box_end) for every box, depth first."""
    pos = start
    while pos + 8 <= end:
        size, btype = struct.unpack_from(">I4s", data, pos)
        header = 8
        if size == 1:                      # 64-bit largesize follows the type
            if pos + 16 > end:
                break
            size = struct.unpack_from(">Q", data, pos + 8)[0]
            header = 16
        elif size == 0:                    # box extends to the end of its parent / file
            size = end - pos
        if size < header or pos + size > end:
            # Truncated or malformed box: report it and stop at this level.
            yield path, btype, pos, pos + header, None
            return
        box_end = pos + size
        yield path, btype, pos, pos + header, box_end
        if btype in CONTAINERS:
            yield from iter_boxes(data, pos + header, box_end, path + (btype,))
        elif btype in CONTAINER_FULLBOX:
            yield from iter_boxes(data, pos + header + CONTAINER_FULLBOX[btype], box_end, path + (btype,))
        pos = box_end


def patch_durations(data, value=None, boxes=DEFAULT_BOXES):
    """Patch data (a bytearray) in place. value=None means all ones in the field width.

    Returns a list of (path, box type, version, file offset, old value, new value)."""
    patches = []
    for path, btype, _start, payload, box_end in iter_boxes(data, 0, len(data)):
        if btype not in boxes or box_end is None:
            continue
        version = data[payload]
        if version not in DURATION_FIELDS[btype]:
            raise ValueError(f"{btype.decode()} at {payload}: unsupported version {version}")
        off, width = DURATION_FIELDS[btype][version]
        field = payload + off
        if field + width > box_end:
            raise ValueError(f"{btype.decode()} at {payload}: box too short")
        fmt = ">I" if width == 4 else ">Q"
        new = (1 << (8 * width)) - 1 if value is None else value
        if new >= 1 << (8 * width):
            raise ValueError(f"value {new} does not fit in {width} bytes ({btype.decode()} v{version})")
        old = struct.unpack_from(fmt, data, field)[0]
        struct.pack_into(fmt, data, field, new)
        patches.append(("/".join(p.decode() for p in path + (btype,)), btype.decode(), version, field, old, new))
    return patches


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--value", type=lambda s: int(s, 0), default=None,
                    help="duration to write (default: all ones = unknown)")
    ap.add_argument("--no-mehd", action="store_true", help="leave mehd (fragment duration) alone")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    with open(args.input, "rb") as f:
        data = bytearray(f.read())
    boxes = tuple(b for b in DEFAULT_BOXES if not (args.no_mehd and b == b"mehd"))
    patches = patch_durations(data, args.value, boxes)
    if not patches:
        print("no duration fields found", file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(data)
    if not args.quiet:
        for path, btype, ver, off, old, new in patches:
            print(f"{path} v{ver} @0x{off:x}: {old:#x} -> {new:#x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
