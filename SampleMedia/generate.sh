#!/usr/bin/env bash
# Makes Playhead's sample clips with the ffmpeg CLI (lavfi sources only, nothing downloaded) and
# records ffprobe's view of each in expected/, which the integration tests compare against.
# Run from anywhere: bash SampleMedia/generate.sh   (needs ffmpeg and ffprobe)
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p expected

ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
# 2 seconds of the counting test pattern (the frame number is drawn in each frame) at 25 fps.
video() { echo "testsrc=size=$1:rate=25:duration=2"; }
tone="sine=frequency=440:sample_rate=48000:duration=2"
x264=(-c:v libx264 -preset veryfast -crf 28 -bf 2 -g 25 -pix_fmt yuv420p)

# Good clips.
ff -f lavfi -i "$(video 320x180)" -f lavfi -i "$tone" "${x264[@]}" -c:a aac -b:a 64k -shortest h264-aac.mp4
ff -f lavfi -i "$(video 320x180)" -f lavfi -i "$tone" -c:v libx265 -preset veryfast -crf 30 -x265-params log-level=error -pix_fmt yuv420p -c:a aac -b:a 64k -shortest hevc-aac.mkv
ff -f lavfi -i "$(video 320x180)" -f lavfi -i "$tone" -c:v libvpx-vp9 -b:v 200k -deadline realtime -cpu-used 8 -pix_fmt yuv420p -c:a libopus -b:a 48k -shortest vp9-opus.webm
ff -f lavfi -i "$(video 320x240)" "${x264[@]}" 4x3.mp4
ff -f lavfi -i "$(video 180x320)" "${x264[@]}" portrait.mp4
# Anamorphic: 240x180 stored, pixels 4:3 wide, so it displays as 320x180 (16:9).
ff -f lavfi -i "$(video 240x180)" -vf setsar=4/3 "${x264[@]}" anamorphic.mp4
# Stored landscape with a 90-degree display matrix (written by a stream-copy pass: the mp4
# muxer only takes the rotate tag when copying). Displays as portrait, 180x320.
ff -f lavfi -i "$(video 320x180)" "${x264[@]}" rotated-source.tmp.mp4
ff -i rotated-source.tmp.mp4 -c copy -metadata:s:v:0 rotate=90 rotated-90.mp4
rm -f rotated-source.tmp.mp4
# Odd dimensions: 4:4:4 so the encoder accepts them.
ff -f lavfi -i "$(video 321x181)" -c:v libx264 -preset veryfast -crf 28 -bf 2 -g 25 -pix_fmt yuv444p odd-size.mp4
ff -f lavfi -i "$(video 320x180)" "${x264[@]}" -an video-only.mp4
# Another audio format (44.1 kHz stereo, a different tone on each side): a queue of it and the
# 48 kHz mono clips must still give one audio stream.
ff -f lavfi -i "$(video 320x180)" -f lavfi -i "sine=frequency=330:sample_rate=44100:duration=2" -f lavfi -i "sine=frequency=660:sample_rate=44100:duration=2" \
  -filter_complex "[1:a][2:a]join=inputs=2:channel_layout=stereo[a]" -map 0:v -map "[a]" "${x264[@]}" -c:a aac -b:a 96k -shortest stereo-44k.mp4
ff -f lavfi -i "$tone" -c:a aac -b:a 64k audio-only.m4a
ff -f lavfi -i "$tone" -c:a libmp3lame -b:a 64k audio-only.mp3

for clip in h264-aac.mp4 hevc-aac.mkv vp9-opus.webm 4x3.mp4 portrait.mp4 anamorphic.mp4 rotated-90.mp4 \
            odd-size.mp4 video-only.mp4 stereo-44k.mp4 audio-only.m4a audio-only.mp3; do
  ffprobe -v error -count_frames -show_format -show_streams -of json "$clip" > "expected/$clip.ffprobe.json"
done

# Bad files: each must fail to load with a clear error.
: > bad-empty.mp4
# The first third of an mp4 whose index (moov) is at the end: no index at all.
head -c "$(( $(stat -c %s h264-aac.mp4) / 3 ))" h264-aac.mp4 > bad-truncated.mp4
# Seeded noise: random-looking bytes that no demuxer accepts, the same on every run.
ff -f lavfi -i "anoisesrc=color=white:seed=7:sample_rate=8000:duration=2" -f s16le -c:a pcm_s16le bad-random.mp4
# Damaged but openable: the index is at the front (faststart), so the file opens, and then...
ff -f lavfi -i "$(video 320x180)" "${x264[@]}" -movflags +faststart faststart.tmp.mp4
# ...the data stops at 60% (a cut download),
head -c "$(( $(stat -c %s faststart.tmp.mp4) * 6 / 10 ))" faststart.tmp.mp4 > damaged-cut.mp4
# ...or 4 KiB in the middle of the media data are zeroed (a bad sector).
cp faststart.tmp.mp4 damaged-zeroed.mp4
dd if=/dev/zero of=damaged-zeroed.mp4 bs=1 seek="$(( $(stat -c %s faststart.tmp.mp4) / 2 ))" count=4096 conv=notrunc status=none
rm -f faststart.tmp.mp4
printf 'This is a text file with a media file name.\nIt has no audio or video in it.\n' > bad-text.mp4
echo "sample clips written to $(pwd)"
