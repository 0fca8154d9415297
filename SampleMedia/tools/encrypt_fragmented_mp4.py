#!/usr/bin/env python3
"""Encrypt a clear *fragmented* MP4 (H.264 + AAC) into a spec-shaped Common Encryption file.

FFmpeg 5.1's mov muxer cannot do this itself: with -movflags frag_* + -encryption_scheme it writes
no senc/saiz/saio into the fragments, so FFmpeg 5.1 cannot read its own output
("saio atom found without saiz").

Input must come from:  ffmpeg ... -movflags frag_keyframe+empty_moov+default_base_moof clear_frag.mp4
usage:  encrypt_fragmented_mp4.py IN OUT --scheme cenc|cbcs [--key HEX32] [--kid HEX32] [--pssh]
  cenc: AES-128-CTR, 8-byte per-sample IVs, video subsample (NAL) encryption, audio full-sample.
  cbcs: AES-128-CBC, 16-byte constant IV in tenc (v1), video pattern 1:9, audio whole-block.
  --pssh adds a W3C common-system pssh (v1, listing the KID) as the *last* box of moov.
Needs python3-cryptography (Debian package). Output decrypts with ffmpeg -decryption_key KEY.
"""
import struct, sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

CONTAINERS = {b'moov', b'trak', b'mdia', b'minf', b'stbl', b'mvex', b'moof', b'traf', b'dinf', b'edts', b'sinf', b'schi'}
PREFIX = {b'stsd': 8, b'avc1': 78, b'encv': 78, b'mp4a': 28, b'enca': 28}  # bytes before child boxes


class Box:
    def __init__(self, typ, payload=b'', children=None, prefix=b''):
        self.type, self.payload, self.children, self.prefix = typ, payload, children, prefix

    def find(self, typ):
        return [c for c in (self.children or []) if c.type == typ]

    def serialize(self):
        body = self.prefix + b''.join(c.serialize() for c in self.children) if self.children is not None else self.payload
        return struct.pack('>I', 8 + len(body)) + self.type + body


def parse(data, off, end):
    out = []
    while off + 8 <= end:
        size, typ = struct.unpack('>I4s', data[off:off + 8])
        assert size >= 8, 'unsupported box size'
        body = data[off + 8:off + size]
        if typ in CONTAINERS or typ in PREFIX:
            p = PREFIX.get(typ, 0)
            box = Box(typ, children=parse(data, off + 8 + p, off + size), prefix=body[:p])
        else:
            box = Box(typ, payload=body)
        box.offset = off
        out.append(box)
        off += size
    return out


def fullbox(typ, version, flags, body):
    return Box(typ, payload=struct.pack('>I', (version << 24) | flags) + body)


def main():
    a = sys.argv[1:]
    src, dst = a[0], a[1]
    get = lambda k, d: a[a.index(k) + 1] if k in a else d
    scheme = get('--scheme', 'cenc')
    key = bytes.fromhex(get('--key', '00112233445566778899aabbccddeeff'))
    kid = bytes.fromhex(get('--kid', 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf'))
    const_iv = bytes.fromhex('0f0e0d0c0b0a09080706050403020100')
    assert scheme in ('cenc', 'cbcs')
    data = bytearray(open(src, 'rb').read())
    top = parse(data, 0, len(data))
    moov = top[[b.type for b in top].index(b'moov')]

    # ---- moov: sample entry -> encv/enca + sinf(frma, schm, schi/tenc)
    kinds, trex = {}, {}
    for trak in moov.find(b'trak'):
        tid = struct.unpack('>I', trak.find(b'tkhd')[0].payload[12:16] if trak.find(b'tkhd')[0].payload[0] == 0
                            else trak.find(b'tkhd')[0].payload[20:24])[0]
        stsd = trak.find(b'mdia')[0].find(b'minf')[0].find(b'stbl')[0].find(b'stsd')[0]
        entry = stsd.children[0]
        orig = entry.type
        video = orig == b'avc1'
        assert orig in (b'avc1', b'mp4a'), 'only avc1/mp4a supported, got %r' % orig
        kinds[tid] = 'video' if video else 'audio'
        entry.type = b'encv' if video else b'enca'
        if scheme == 'cenc':
            tenc = fullbox(b'tenc', 0, 0, b'\0\0' + b'\x01\x08' + kid)
        else:
            pattern = 0x19 if video else 0x00
            tenc = fullbox(b'tenc', 1, 0, b'\0' + bytes([pattern]) + b'\x01\x00' + kid + b'\x10' + const_iv)
        sinf = Box(b'sinf', children=[Box(b'frma', payload=orig),
                                      fullbox(b'schm', 0, 0, scheme.encode() + struct.pack('>I', 0x10000)),
                                      Box(b'schi', children=[tenc])])
        btrt = [i for i, c in enumerate(entry.children) if c.type == b'btrt']
        entry.children.insert(btrt[0] if btrt else len(entry.children), sinf)
        if video:
            avcc = entry.find(b'avcC')[0].payload
            assert (avcc[4] & 3) == 3, 'expects 4-byte NAL length prefixes'
    for t in moov.find(b'mvex')[0].find(b'trex'):
        tid, _, dur, size, flags = struct.unpack('>IIIII', t.payload[4:24])
        trex[tid] = size
    if '--pssh' in a:
        sysid = bytes.fromhex('1077efecc0b24d02ace33c1e52e2fb4b')
        moov.children.append(fullbox(b'pssh', 1, 0, sysid + struct.pack('>I', 1) + kid + struct.pack('>I', 0)))

    # ---- fragments
    sample_no = {}
    out_boxes = []
    for box in top:
        if box.type == b'mfra':
            continue  # tfra offsets would be stale; the demuxer does not need mfra
        if box.type != b'moof':
            out_boxes.append(box)
            continue
        moof_start = box.offset
        old_size = len(box.serialize())
        for traf in box.find(b'traf'):
            tfhd = traf.find(b'tfhd')[0].payload
            tflags = struct.unpack('>I', tfhd[:4])[0] & 0xffffff
            assert tflags & 0x020000, 'needs -movflags default_base_moof'
            tid = struct.unpack('>I', tfhd[4:8])[0]
            p = 8
            if tflags & 0x01: p += 8
            if tflags & 0x02: p += 4
            if tflags & 0x08: p += 4
            def_size = struct.unpack('>I', tfhd[p:p + 4])[0] if tflags & 0x10 else trex[tid]
            trun = traf.find(b'trun')[0]
            tr = trun.payload
            rflags = struct.unpack('>I', tr[:4])[0] & 0xffffff
            count = struct.unpack('>I', tr[4:8])[0]
            assert rflags & 0x01, 'trun needs data_offset'
            data_off = struct.unpack('>i', tr[8:12])[0]
            q = 12 + (4 if rflags & 0x04 else 0)
            sizes = []
            for _ in range(count):
                if rflags & 0x100: q += 4
                if rflags & 0x200:
                    sizes.append(struct.unpack('>I', tr[q:q + 4])[0]); q += 4
                else:
                    sizes.append(def_size)
                if rflags & 0x400: q += 4
                if rflags & 0x800: q += 4
            pos = moof_start + data_off
            entries, info_sizes = [], []
            for sz in sizes:
                n = sample_no.get(tid, 0); sample_no[tid] = n + 1
                sample = bytes(data[pos:pos + sz])
                iv8 = struct.pack('>II', tid, n)
                enc, subs = encrypt_sample(sample, kinds[tid] == 'video', scheme, key, iv8, const_iv)
                data[pos:pos + sz] = enc
                pos += sz
                e = iv8 if scheme == 'cenc' else b''
                if subs is not None:
                    e += struct.pack('>H', len(subs)) + b''.join(struct.pack('>HI', c, p_) for c, p_ in subs)
                entries.append(e); info_sizes.append(len(e))
            flags = 0x2 if kinds[tid] == 'video' else 0
            senc = fullbox(b'senc', 0, flags, struct.pack('>I', count) + b''.join(entries))
            if len(set(info_sizes)) == 1:
                saiz = fullbox(b'saiz', 0, 0, bytes([info_sizes[0]]) + struct.pack('>I', count))
            else:
                saiz = fullbox(b'saiz', 0, 0, b'\0' + struct.pack('>I', count) + bytes(info_sizes))
            saio = fullbox(b'saio', 0, 0, struct.pack('>II', 1, 0))  # offset patched below
            traf.trun = trun
            if not any(info_sizes):
                continue  # constant IV + full-sample (cbcs audio): tenc alone describes it, no aux info
            traf.children += [saiz, saio, senc]
        # fix trun data offsets (mdat follows moof, which grew) and saio offsets (relative to moof)
        delta = len(box.serialize()) - old_size
        for traf in box.find(b'traf'):
            tr = bytearray(traf.trun.payload)
            struct.pack_into('>i', tr, 8, struct.unpack('>i', tr[8:12])[0] + delta)
            traf.trun.payload = bytes(tr)
        ser = box.serialize()
        off = 8
        for c in box.children:
            clen = len(c.serialize())
            if c.type == b'traf':
                inner = 8
                for cc in c.children:
                    cclen = len(cc.serialize())
                    if cc.type == b'senc':
                        senc_data = off + inner + 8 + 8  # header + version/flags + sample_count
                    inner += cclen
                if not c.find(b'saio'):
                    off += clen
                    continue
                sa = c.find(b'saio')[0]
                sa.payload = sa.payload[:8] + struct.pack('>I', senc_data)
            off += clen
        assert len(box.serialize()) == len(ser)
        out_boxes.append(box)
    # mdat payloads were encrypted in `data`; re-read the leaf payloads from it
    for b in out_boxes:
        if b.type == b'mdat':
            b.payload = bytes(data[b.offset + 8:b.offset + 8 + len(b.payload)])
    with open(dst, 'wb') as f:
        for b in out_boxes:
            f.write(b.serialize())


def encrypt_sample(sample, video, scheme, key, iv8, const_iv):
    """Returns (encrypted bytes, subsamples [(clear, protected)] or None for full-sample)."""
    if not video:
        if scheme == 'cenc':
            c = Cipher(algorithms.AES(key), modes.CTR(iv8 + b'\0' * 8)).encryptor()
            return c.update(sample) + c.finalize(), None
        n = len(sample) // 16 * 16  # cbcs audio: whole blocks CBC, trailing partial block clear
        c = Cipher(algorithms.AES(key), modes.CBC(const_iv)).encryptor()
        return c.update(sample[:n]) + c.finalize() + sample[n:], None
    # video: walk 4-byte-length-prefixed NAL units; encrypt the 16-byte-aligned tail of VCL NALs
    subs, out, i, pending_clear = [], bytearray(), 0, 0
    ctr = Cipher(algorithms.AES(key), modes.CTR(iv8 + b'\0' * 8)).encryptor() if scheme == 'cenc' else None
    while i < len(sample):
        n = struct.unpack('>I', sample[i:i + 4])[0]
        nal = sample[i + 4:i + 4 + n]
        vcl = 1 <= (nal[0] & 0x1f) <= 5
        prot = ((n - 1) // 16) * 16 if vcl else 0
        clear = 4 + n - prot
        out += sample[i:i + clear]
        body = sample[i + clear:i + 4 + n]
        if prot:
            if scheme == 'cenc':
                out += ctr.update(body)
            else:
                out += cbcs_pattern(body, key, const_iv, 1, 9)
            subs.append((pending_clear + clear, prot)); pending_clear = 0
        else:
            pending_clear += clear
        i += 4 + n
    if pending_clear:
        subs.append((pending_clear, 0))
    for c, _ in subs:
        assert c < 65536
    return bytes(out), subs


def cbcs_pattern(body, key, iv, crypt, skip):
    enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()  # chain continues across the pattern
    out, p = bytearray(), 0
    while len(body) - p >= 16 * crypt:
        out += enc.update(body[p:p + 16 * crypt]); p += 16 * crypt
        s = min(16 * skip, len(body) - p)
        out += body[p:p + s]; p += s
    out += body[p:]
    return bytes(out)


if __name__ == '__main__':
    main()
