#!/usr/bin/env python3
"""Byte-patch an FFmpeg-written (non-fragmented, moov-at-end) CENC MP4 for detection fixtures.
usage: relabel_cenc_scheme.py IN OUT [--scheme cbcs|cens|cbc1] [--pattern 0x19] [--strip-aux] [--pssh end|start]
 --scheme   rewrite every schm scheme_type (label only: payload stays AES-CTR 'cenc')
 --pattern  make tenc version 1 with crypt/skip pattern byte (e.g. 0x19 = 1:9)
 --strip-aux  rename senc/saio/saiz to 'free' (tenc-only protection, no per-sample aux info)
 --pssh     append a v1 Common-SystemID pssh box at end of moov (after the traks) or right after mvhd"""
import sys, struct
args = sys.argv[1:]; src, dst = args[0], args[1]; opts = args[2:]
d = bytearray(open(src, 'rb').read())
def opt(name):
    return opts[opts.index(name) + 1] if name in opts else None
CONT = {b'moov', b'trak', b'mdia', b'minf', b'stbl', b'sinf', b'schi'}
def walk(o, e, out, parents):
    while o + 8 <= e:
        sz, t = struct.unpack('>I4s', d[o:o+8])
        out.append((t, o, sz, parents))
        if t in CONT: walk(o + 8, o + sz, out, parents + [o])
        elif t == b'stsd': walk(o + 16, o + sz, out, parents + [o])
        elif t in (b'encv',): walk(o + 86, o + sz, out, parents + [o])
        elif t in (b'enca',): walk(o + 36, o + sz, out, parents + [o])
        o += sz
boxes = []; walk(0, len(d), boxes, [])
sch = opt('--scheme'); pat = opt('--pattern')
for t, o, sz, _ in boxes:
    if t == b'schm' and sch: d[o+12:o+16] = sch.encode()
    if t == b'tenc' and pat: d[o+8] = 1; d[o+13] = int(pat, 0)
    if t in (b'senc', b'saio', b'saiz') and '--strip-aux' in opts: d[o+4:o+8] = b'free'
where = opt('--pssh')
if where:
    kid = bytes.fromhex('a0a1a2a3a4a5a6a7a8a9aaabacadaeaf')
    sysid = bytes.fromhex('1077efecc0b24d02ace33c1e52e2fb4b')  # W3C Common PSSH
    body = b'\x01\x00\x00\x00' + sysid + struct.pack('>I', 1) + kid + struct.pack('>I', 0)
    pssh = struct.pack('>I', 8 + len(body)) + b'pssh' + body
    moov = [b for b in boxes if b[0] == b'moov'][0]
    assert moov[1] > [b for b in boxes if b[0] == b'mdat'][0][1], 'moov must follow mdat (no faststart)'
    mvhd = [b for b in boxes if b[0] == b'mvhd'][0]
    at = moov[1] + moov[2] if where == 'end' else mvhd[1] + mvhd[2]
    d[at:at] = pssh
    struct.pack_into('>I', d, moov[1], moov[2] + len(pssh))
open(dst, 'wb').write(d)
