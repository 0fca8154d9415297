#!/usr/bin/env python3
"""Rewrite the display matrix of the video track's tkhd box in an MP4/MOV file.

usage: patch_tkhd.py IN OUT a b c d

a, b, c, d are the matrix entries in ISO order (numbers such as 1, -1, 0). The matrix
written, in file order, is {a, b, 0, c, d, 0, 0, 0, 1.0}: a, b, c, d as 16.16 fixed point,
u, v = 0 (2.30) and w = 1.0 in 2.30 fixed point (0x40000000). A source point (x, y) maps to
(a*x + c*y, b*x + d*y) (ISO/IEC 14496-12 8.3.2 / QuickTime).

The track is the one (there must be exactly one) whose mdia/hdlr handler_type is 'vide'.
tkhd width/height are left as they are: like ffmpeg's own muxer and camera files, they keep
the size before the matrix is applied. Only the 36 matrix bytes change; box sizes do not, so
the output is a byte-for-byte copy apart from them.

The box walk handles 32-bit sizes, 64-bit sizes (size == 1, largesize follows the type),
size 0 (the box runs to the end of its parent / the file) and tkhd version 0 and 1.
"""
import struct
import sys


def boxes(buf, start, end):
    """Yield (type, payload_start, box_end) for the boxes in buf[start:end]."""
    pos = start
    while pos + 8 <= end:
        size, typ = struct.unpack_from(">I4s", buf, pos)
        hdr = 8
        if size == 1:
            if pos + 16 > end:
                raise ValueError("truncated 64-bit box header at %d" % pos)
            size = struct.unpack_from(">Q", buf, pos + 8)[0]
            hdr = 16
        elif size == 0:
            size = end - pos
        if size < hdr or pos + size > end:
            raise ValueError("bad size %d for box %r at %d" % (size, typ, pos))
        yield typ, pos + hdr, pos + size
        pos += size


def child(buf, start, end, typ):
    for t, s, e in boxes(buf, start, end):
        if t == typ:
            return s, e
    return None


def path(buf, start, end, *types):
    rng = (start, end)
    for t in types:
        rng = child(buf, rng[0], rng[1], t)
        if rng is None:
            return None
    return rng


def fixed16(v):
    n = int(round(float(v) * 65536))
    if not -(1 << 31) <= n < (1 << 31):
        raise ValueError("matrix value %s out of range" % v)
    return n


def video_traks(buf):
    moov = child(buf, 0, len(buf), b"moov")
    if moov is None:
        raise ValueError("no moov box")
    for t, s, e in boxes(buf, *moov):
        if t != b"trak":
            continue
        hdlr = path(buf, s, e, b"mdia", b"hdlr")
        # hdlr payload: version/flags(4) pre_defined(4) handler_type(4) ...
        if hdlr and buf[hdlr[0] + 8:hdlr[0] + 12] == b"vide":
            yield s, e


def patch(buf, a, b, c, d):
    """Patch buf (a bytearray) in place; returns the file offset of the matrix."""
    traks = list(video_traks(buf))
    if len(traks) != 1:
        raise ValueError("expected exactly one video track, found %d" % len(traks))
    s, e = traks[0]
    tkhd = child(buf, s, e, b"tkhd")
    if tkhd is None:
        raise ValueError("video trak without tkhd")
    version = buf[tkhd[0]]
    if version not in (0, 1):
        raise ValueError("unsupported tkhd version %d" % version)
    # version/flags(4); creation, modification (4 or 8 each), track_ID(4), reserved(4),
    # duration (4 or 8); reserved(8) layer(2) alternate_group(2) volume(2) reserved(2);
    # matrix(36); width(4) height(4).
    m = tkhd[0] + 4 + (32 if version == 1 else 20) + 16
    if m + 36 + 8 > tkhd[1]:
        raise ValueError("tkhd too short")
    struct.pack_into(">9i", buf, m, fixed16(a), fixed16(b), 0, fixed16(c), fixed16(d), 0,
                     0, 0, 1 << 30)
    return m


def main(argv):
    if len(argv) != 7:
        sys.exit(__doc__)
    with open(argv[1], "rb") as f:
        buf = bytearray(f.read())
    patch(buf, *argv[3:7])
    with open(argv[2], "wb") as f:
        f.write(buf)


if __name__ == "__main__":
    main(sys.argv)
