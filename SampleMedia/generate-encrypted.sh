#!/usr/bin/env bash
# Makes the encrypted fixtures in reader/ (ISO Common Encryption), which the tests expect to be
# refused with decode.encrypted and marked in probe. FFmpeg 5.1's mp4 muxer writes only
# cenc-aes-ctr (the tests make that file themselves with the ffmpeg CLI); these two need more:
# - encrypted-cbcs.mp4: a clear fragmented MP4 encrypted as cbcs by tools/encrypt_fragmented_mp4.py
#   (needs Debian's python3-cryptography); `ffmpeg -decryption_key $KEY` decodes it exactly.
# - encrypted-cens.mp4: a cenc file whose scheme is relabelled cens (tools/relabel_cenc_scheme.py;
#   for detection only: its payload stays AES-CTR).
# Run from anywhere: bash SampleMedia/generate-encrypted.sh
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
key=00112233445566778899aabbccddeeff
kid=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
src=(-f lavfi -i testsrc=size=160x90:rate=25:duration=2 -f lavfi -i sine=frequency=440:sample_rate=44100:duration=2)
enc=(-c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac -b:a 32k -shortest)
ff "${src[@]}" "${enc[@]}" -g 50 -movflags frag_keyframe+empty_moov+default_base_moof "$tmp/clear-fragmented.mp4"
python3 "$here/tools/encrypt_fragmented_mp4.py" "$tmp/clear-fragmented.mp4" "$here/reader/encrypted-cbcs.mp4" --scheme cbcs --key "$key" --kid "$kid"
ff "${src[@]}" "${enc[@]}" -g 25 -encryption_scheme cenc-aes-ctr -encryption_key "$key" -encryption_kid "$kid" "$tmp/cenc.mp4"
python3 "$here/tools/relabel_cenc_scheme.py" "$tmp/cenc.mp4" "$here/reader/encrypted-cens.mp4" --scheme cens --pattern 0x19
ls -l "$here/reader/encrypted-cbcs.mp4" "$here/reader/encrypted-cens.mp4"
