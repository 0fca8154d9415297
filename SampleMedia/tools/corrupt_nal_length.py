#!/usr/bin/env python3
"""Damage one H.264/HEVC sample in an MP4 by overwriting its first NAL length prefix.

usage: corrupt_nal_length.py IN OUT POS SIZE [--value 0xFFFFFFFF]

POS and SIZE are the sample's byte offset and size in the file, as ffprobe reports them
(-show_packets -show_entries packet=pos,size). The sample must start with a 4-byte NAL unit
length (length-prefixed / avcC style, nal_length_size 4) that fits inside the sample; that
prefix is replaced by VALUE (default 0xFFFFFFFF, a length far larger than the sample), so
the NAL splitter rejects the whole packet ("Invalid NAL unit size") and the decoder drops it.
Nothing else in the file changes.
"""
import argparse
import struct
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("pos", type=lambda s: int(s, 0))
    ap.add_argument("size", type=lambda s: int(s, 0))
    ap.add_argument("--value", type=lambda s: int(s, 0), default=0xFFFFFFFF)
    args = ap.parse_args(argv)
    with open(args.input, "rb") as f:
        data = bytearray(f.read())
    if args.pos < 0 or args.size < 5 or args.pos + args.size > len(data):
        sys.exit("sample %d+%d is not inside the %d-byte file" % (args.pos, args.size, len(data)))
    old = struct.unpack_from(">I", data, args.pos)[0]
    if not 1 <= old <= args.size - 4:
        sys.exit("bytes at %d (%#x) are not a 4-byte NAL length inside a %d-byte sample"
                 % (args.pos, old, args.size))
    nal_type = data[args.pos + 4] & 0x1F
    struct.pack_into(">I", data, args.pos, args.value)
    with open(args.output, "wb") as f:
        f.write(data)
    print("sample @%d (%d bytes): first NAL (h264 type %d) length %d -> %#x"
          % (args.pos, args.size, nal_type, old, args.value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
