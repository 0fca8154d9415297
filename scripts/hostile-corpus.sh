#!/usr/bin/env bash
# Makes the hostile-input corpus into the folder given (default .build-corpus/): files that must
# each give a typed error naming the file, quickly, with no crash. Deterministic: every byte comes
# from the sample clips, ffmpeg's seeded noise, or fixed text.
# Usage: scripts/hostile-corpus.sh [folder]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.build-corpus}"
rm -rf "$dir"
mkdir -p "$dir"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
src=SampleMedia/h264-aac.mp4

: > "$dir/empty.mp4"
ff -f lavfi -i "anoisesrc=color=white:seed=11:sample_rate=8000:duration=4" -f s16le -c:a pcm_s16le "$dir/noise.mkv"
ff -f lavfi -i "anoisesrc=color=pink:seed=12:sample_rate=8000:duration=1" -f s16le -c:a pcm_s16le "$dir/noise.webm"

# An index-first copy, cut at ten points (index present, media data missing from there on), and
# the original (index last) cut at the same points (no index at all).
ff -i "$src" -c copy -movflags +faststart "$dir/.faststart.mp4"
size=$(stat -c %s "$dir/.faststart.mp4")
for pct in 1 5 10 20 30 45 60 75 90 99; do
  head -c $(( size * pct / 100 )) "$dir/.faststart.mp4" > "$dir/cut-indexfirst-$pct.mp4"
  head -c $(( $(stat -c %s "$src") * pct / 100 )) "$src" > "$dir/cut-noindex-$pct.mp4"
done
# Zeroed regions inside the media data.
for at in 20 40 60 80; do
  cp "$dir/.faststart.mp4" "$dir/zeroed-$at.mp4"
  dd if=/dev/zero of="$dir/zeroed-$at.mp4" bs=1 seek=$(( size * at / 100 )) count=2048 conv=notrunc status=none
done
rm -f "$dir/.faststart.mp4"
# Absurd header values: a YUV4MPEG2 stream claiming 1,000,000 x 1,000,000 pixels, another claiming
# a zero frame rate, each followed by a few bytes of "frame".
printf 'YUV4MPEG2 W1000000 H1000000 F25:1 Ip A1:1 C420jpeg\nFRAME\nxxxx' > "$dir/absurd-size.y4m"
printf 'YUV4MPEG2 W320 H180 F0:0 Ip A1:1 C420jpeg\nFRAME\nxxxx' > "$dir/absurd-rate.y4m"
printf 'YUV4MPEG2 W-5 H-5 F25:1 Ip A1:1 C420jpeg\nFRAME\n' > "$dir/negative-size.y4m"
# Non-media files with media names.
printf 'This is plain text pretending to be a video.\n' > "$dir/text.mp4"
cp scripts/setup.sh "$dir/script.mkv"
printf '{"not": "a video"}\n' > "$dir/json.mov"
mkdir -p "$dir/directory.mp4"
echo "$dir"
