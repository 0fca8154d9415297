#!/usr/bin/env bash
# Makes the fixtures of the "one media reader" tests in reader/ with the ffmpeg CLI (FFmpeg 5.1,
# lavfi sources only, nothing downloaded), checks that each clip is what it claims to be, and
# writes reader/expected.json (tools/reader_expected.py) with the frame times, keyframes, sizes
# and sample counts the tests compare against. Any failed check stops the script (exit 1).
# Run from anywhere: bash SampleMedia/generate-reader.sh   (needs ffmpeg, ffprobe, python3)
# Deterministic: x264/x265/libvpx run single-threaded, muxers run with +bitexact, so a second run
# writes the same bytes (on the same FFmpeg build).
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
here="$(cd "$(dirname "$0")" && pwd)"
tools="$here/tools"
out="$here/reader"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$out"
rm -f ./*.mp4 ./*.mkv ./*.webm ./*.ts ./*.h264 ./*.mpg ./*.flv expected.json

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
probe() { ffprobe -v error "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# check WHAT GOT WANT: exact string comparison.
check() { if [[ "$2" == "$3" ]]; then echo "ok   $1: $2"; else fail "$1: got '$2', want '$3'"; fi; }

# Counting test pattern (each frame shows its number), 64x36: src RATE SECONDS
src() { echo "testsrc=size=64x36:rate=$1:duration=$2"; }
tone() { echo "sine=frequency=${2:-440}:sample_rate=48000:duration=$1"; }
# b-adapt=0: with -bf 2, always two B-frames between references (x264's adaptive choice puts
# almost none in these tiny, nearly static pictures). No scene-cut keyframes either.
x264=(-c:v libx264 -preset veryfast -threads 1 -pix_fmt yuv420p -sc_threshold 0 -x264-params b-adapt=0)
aac=(-c:a aac -b:a 48k -ac 1)
bitexact=(-fflags +bitexact)

# Decoded video frames (ffprobe -count_frames).
nframes() { ffprobe -v quiet -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" |
             awk 'NR == 1' | sed 's/,$//'; }
# pts_time of the demuxed video packets flagged as keyframes, space separated.
keytimes() { probe -select_streams v:0 -show_packets -show_entries packet=pts_time,flags -of csv=p=0 "$1" |
             awk -F, 'NF && $2 ~ /K/ { printf "%s%s", sep, $1; sep = " " }'; }
# Decoded picture types, e.g. "I=3 P=25 B=47".
ptypes() { probe -select_streams v:0 -show_frames -show_entries frame=pict_type -of csv=p=0 "$1" |
           awk -F, 'NF { n[$1]++ } END { printf "I=%d P=%d B=%d", n["I"], n["P"], n["B"] }'; }
# Stream values, comma separated: sval FILE STREAMSPEC ENTRIES (side data, if any, is left out).
sval() { probe -select_streams "$2" -show_entries "stream=$3" -of csv=p=0 "$1" | awk 'NR == 1' | sed 's/,$//'; }
# Frames ffmpeg's CLI says it decoded and passed on: clifr FILE [input options...]
clifr() { local f="$1"; shift
          ffmpeg -nostdin -hide_banner -v error -stats "$@" -i "$f" -map 0:v:0 -f null - 2>&1 |
            tr '\r' '\n' | sed -n 's/^frame= *\([0-9]*\).*/\1/p' | tail -n 1; }
# Size of the first frame ffmpeg outputs (with its default autorotation), as WxH.
shownsize() { ff -i "$1" -map 0:v:0 -frames:v 1 -f yuv4mpegpipe -pix_fmt yuv420p "$tmp/size.y4m"
              head -n 1 "$tmp/size.y4m" | tr ' ' '\n' | awk '/^W/ { w = substr($0, 2) } /^H/ { h = substr($0, 2) } END { print w "x" h }'; }

echo "== 1. exact-time clips (64x36 testsrc, 3 s)"
exact() { # NAME BFRAMES RATE GOP
  ff -f lavfi -i "$(src "$3" 3)" "${x264[@]}" -bf "$2" -g "$4" -keyint_min "$4" "${bitexact[@]}" "$1"; }
exact bframes-25.mp4 2 25 25
exact nobframes-25.mp4 0 25 25
exact bframes-ntsc.mp4 2 30000/1001 30
exact nobframes-ntsc.mp4 0 30000/1001 30
ff -f lavfi -i "$(src 25 3)" "${x264[@]}" -bf 0 -g 25 -frames:v 1 "${bitexact[@]}" one-frame.mp4
for c in bframes-25.mp4 nobframes-25.mp4; do
  check "$c frames" "$(nframes $c)" 75
  check "$c keyframes" "$(keytimes $c)" "0.000000 1.000000 2.000000"
done
for c in bframes-ntsc.mp4 nobframes-ntsc.mp4; do
  check "$c frames" "$(nframes $c)" 90
  check "$c keyframes" "$(keytimes $c)" "0.000000 1.001000 2.002000"
done
check "bframes-25.mp4 has_b_frames" "$(sval bframes-25.mp4 v:0 has_b_frames)" 2
check "bframes-ntsc.mp4 has_b_frames" "$(sval bframes-ntsc.mp4 v:0 has_b_frames)" 2
check "nobframes-25.mp4 has_b_frames" "$(sval nobframes-25.mp4 v:0 has_b_frames)" 0
check "nobframes-ntsc.mp4 has_b_frames" "$(sval nobframes-ntsc.mp4 v:0 has_b_frames)" 0
check "bframes-25.mp4 picture types" "$(ptypes bframes-25.mp4)" "I=3 P=24 B=48"
check "nobframes-25.mp4 picture types" "$(ptypes nobframes-25.mp4)" "I=3 P=72 B=0"
check "bframes-ntsc.mp4 picture types" "$(ptypes bframes-ntsc.mp4)" "I=3 P=30 B=57"
check "nobframes-ntsc.mp4 picture types" "$(ptypes nobframes-ntsc.mp4)" "I=3 P=87 B=0"
check "one-frame.mp4 frames" "$(nframes one-frame.mp4)" 1

echo "== 2. sparse keyframes (20 s at 30 fps, keyframes at 0 and 500/30 s)"
ff -f lavfi -i "$(src 30 20)" "${x264[@]}" -bf 2 -g 500 -keyint_min 500 "${bitexact[@]}" sparse-keyframes.mp4
check "sparse-keyframes.mp4 frames" "$(nframes sparse-keyframes.mp4)" 600
check "sparse-keyframes.mp4 keyframes" "$(keytimes sparse-keyframes.mp4)" "0.000000 16.666667"

echo "== 3. orientation (one 5-frame clip, eight tkhd matrices)"
ff -f lavfi -i "$(src 25 1)" "${x264[@]}" -bf 0 -g 25 -frames:v 5 "${bitexact[@]}" "$tmp/orient.mp4"
# name  a  b  c  d  ffprobe-rotation  shown-size  what ffmpeg's autorotation must equal
while read -r name a b c d rot size vf; do
  f="orient-$name.mp4"
  python3 "$tools/patch_tkhd.py" "$tmp/orient.mp4" "$f" "$a" "$b" "$c" "$d"
  got=$(probe -select_streams v:0 -show_entries stream_side_data=rotation -of csv=p=0 "$f" | awk 'NF')
  check "$f rotation" "${got:-none}" "$rot"
  check "$f stored size" "$(sval "$f" v:0 width,height | tr , x)" 64x36
  check "$f shown size" "$(shownsize "$f")" "$size"
  ff -i "$f" -frames:v 1 -f rawvideo -pix_fmt yuv420p "$tmp/auto.yuv"
  ff -noautorotate -i "$f" -vf "$vf" -frames:v 1 -f rawvideo -pix_fmt yuv420p "$tmp/vf.yuv"
  cmp -s "$tmp/auto.yuv" "$tmp/vf.yuv" || fail "$f: autorotated frame differs from -noautorotate -vf $vf"
  echo "ok   $f pixels: autorotated frame == -noautorotate -vf $vf"
done <<'EOF'
r0    1  0  0  1  none 64x36 null
r90   0  1 -1  0  -90  36x64 transpose=clock
r180 -1  0  0 -1  -180 64x36 hflip,vflip
r270  0 -1  1  0  90   36x64 transpose=cclock
r0m  -1  0  0  1  -180 64x36 hflip
r90m  0  1  1  0  -90  36x64 transpose=cclock_flip
r180m 1  0  0 -1  0    64x36 vflip
r270m 0 -1 -1  0  90   36x64 transpose=clock_flip
EOF

echo "== 4. colour (320x180 smptehdbars, 3 frames)"
# The bars are drawn in RGB and converted with the tagged matrix and range, so decoding with the
# tags gives back the same RGB from every clip.
bars=(-f lavfi -i "smptehdbars=size=320x180:rate=25" -frames:v 3)
rgb="format=gbrp"
bt709=(-colorspace bt709 -color_primaries bt709 -color_trc bt709)
ff "${bars[@]}" -vf "$rgb,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p" \
   "${x264[@]}" "${bt709[@]}" -color_range tv "${bitexact[@]}" bt709-limited.mp4
ff "${bars[@]}" -vf "$rgb,scale=out_color_matrix=bt709:out_range=pc,format=yuv420p" \
   "${x264[@]}" "${bt709[@]}" -color_range pc "${bitexact[@]}" bt709-full.mp4
ff "${bars[@]}" -vf "$rgb,scale=out_color_matrix=bt709:out_range=pc,format=yuv420p" \
   -c:v ffv1 -pix_fmt yuv420p "${bt709[@]}" -color_range pc "${bitexact[@]}" bt709-full-ffv1.mkv
ff "${bars[@]}" -vf "$rgb,scale=out_color_matrix=bt2020:out_range=tv,format=yuv420p10le" \
   -c:v libx265 -preset veryfast -pix_fmt yuv420p10le -x265-params log-level=error:pools=none:frame-threads=1 \
   -colorspace bt2020nc -color_primaries bt2020 -color_trc smpte2084 -color_range tv "${bitexact[@]}" bt2020-10bit.mkv
ff "${bars[@]}" -vf "$rgb,scale,format=yuv420p" "${x264[@]}" "${bitexact[@]}" untagged-hd.mp4
# name  pix_fmt  color_range  color_space  color_primaries  color_transfer (stream, then frame)
while read -r f pix tags; do
  check "$f stream pix_fmt" "$(sval "$f" v:0 pix_fmt)" "$pix"
  # ffprobe's csv order for streams: range, space, transfer, primaries.
  check "$f stream tags" "$(sval "$f" v:0 color_range,color_space,color_primaries,color_transfer |
                          awk -F, '{ print $1, $2, $4, $3 }')" "$tags"
  # ... and for frames: range, space, primaries, transfer.
  check "$f frame tags" "$(probe -select_streams v:0 -read_intervals %+#1 -show_entries frame=color_range,color_space,color_primaries,color_transfer -of csv=p=0 "$f" |
                         awk 'NR == 1' | sed 's/,$//' | tr , ' ')" "$tags"
  check "$f frames" "$(nframes "$f")" 3
done <<'EOF'
bt709-limited.mp4 yuv420p tv bt709 bt709 bt709
bt709-full.mp4 yuvj420p pc bt709 bt709 bt709
bt709-full-ffv1.mkv yuv420p pc bt709 bt709 bt709
bt2020-10bit.mkv yuv420p10le tv bt2020nc bt2020 smpte2084
untagged-hd.mp4 yuv420p unknown unknown unknown unknown
EOF

echo "== 5. fragmented MP4 with every duration field 'unknown'"
ff -f lavfi -i "$(src 25 2)" -f lavfi -i "$(tone 2)" "${x264[@]}" -bf 2 -g 25 "${aac[@]}" -t 2 \
   -movflags frag_keyframe+empty_moov+default_base_moof "${bitexact[@]}" "$tmp/frag.mp4"
python3 "$tools/patch_mp4_durations.py" "$tmp/frag.mp4" fragmented-unknown.mp4
check "fragmented-unknown.mp4 duration_ts" "$(sval fragmented-unknown.mp4 v:0 duration_ts) $(sval fragmented-unknown.mp4 a:0 duration_ts)" "4294967295 4294967295"
ffmpeg -nostdin -v error -i fragmented-unknown.mp4 -f null - || fail "fragmented-unknown.mp4 does not decode"
check "fragmented-unknown.mp4 frames (ffprobe)" "$(nframes fragmented-unknown.mp4)" 50
check "fragmented-unknown.mp4 frames (ffmpeg)" "$(clifr fragmented-unknown.mp4)" 50
ff -i "$tmp/frag.mp4" -map 0:a -f s16le "$tmp/a0.pcm"
ff -i fragmented-unknown.mp4 -map 0:a -f s16le "$tmp/a1.pcm"
check "fragmented-unknown.mp4 audio samples == unpatched" "$(( $(stat -c %s "$tmp/a1.pcm") / 2 ))" "$(( $(stat -c %s "$tmp/a0.pcm") / 2 ))"
echo "     fragmented-unknown.mp4: $(( $(stat -c %s "$tmp/a1.pcm") / 2 )) audio samples decoded," \
     "$(probe -count_packets -select_streams a:0 -show_entries stream=nb_read_packets -of csv=p=0 fragmented-unknown.mp4) AAC packets"

echo "== 6. Matroska / WebM cut in half"
ff -f lavfi -i "$(src 25 2)" -f lavfi -i "$(tone 2)" "${x264[@]}" -bf 2 -g 25 "${aac[@]}" -t 2 \
   -cluster_time_limit 250 "${bitexact[@]}" "$tmp/whole.mkv"
ff -f lavfi -i "$(src 25 2)" -f lavfi -i "$(tone 2)" -c:v libvpx-vp9 -b:v 100k -deadline realtime -cpu-used 8 \
   -threads 1 -g 25 -pix_fmt yuv420p -c:a libopus -b:a 32k -ac 1 -t 2 -cluster_time_limit 250 "${bitexact[@]}" "$tmp/whole.webm"
for c in mkv webm; do
  clusters=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(bytes.fromhex("1F43B675")))' "$tmp/whole.$c")
  (( clusters >= 4 )) || fail "whole.$c has only $clusters clusters"
  whole=$(stat -c %s "$tmp/whole.$c")
  head -c "$(( whole / 2 ))" "$tmp/whole.$c" > "cut.$c"
  msg=$(ffmpeg -nostdin -hide_banner -v warning -i "cut.$c" -f null - 2>&1) || fail "cut.$c: ffmpeg failed"
  grep -q "File ended prematurely" <<<"$msg" || fail "cut.$c: no 'File ended prematurely' warning: $msg"
  echo "ok   cut.$c: $clusters clusters, $(( whole / 2 )) of $whole bytes kept, 'File ended prematurely';" \
       "$(nframes "cut.$c") of $(nframes "$tmp/whole.$c") video frames left"
done

echo "== 7. one damaged NAL length (bad-nal.mp4)"
# Keyframes at frames 0 and 15; the damaged sample is frame 14, the last P-frame before the
# second keyframe, so no frame that is decoded refers to it and the other 29 stay bit-exact.
# (With one GOP of 30 every later P-frame would inherit the loss.)
dropped=14
ff -f lavfi -i "$(src 25 2)" "${x264[@]}" -bf 0 -g 15 -keyint_min 15 -frames:v 30 "${bitexact[@]}" bad-nal-original.mp4
check "bad-nal-original.mp4 keyframes" "$(keytimes bad-nal-original.mp4)" "0.000000 0.600000"
# ffprobe's csv order: pts, size, pos, flags.
read -r pts pos size flags <<<"$(probe -select_streams v:0 -show_packets -show_entries packet=pts,pos,size,flags -of csv=p=0 bad-nal-original.mp4 |
                                 sed -n "$(( dropped + 1 ))p" | awk -F, '{ print $1, $3, $2, $4 }')"
[[ "$flags" != *K* ]] || fail "frame $dropped is a keyframe"
python3 "$tools/corrupt_nal_length.py" bad-nal-original.mp4 bad-nal.mp4 "$pos" "$size"
log=$(ffmpeg -nostdin -hide_banner -v error -i bad-nal.mp4 -f null - 2>&1) || fail "bad-nal.mp4: ffmpeg exit status $?"
grep -q "Invalid NAL unit size" <<<"$log" || fail "bad-nal.mp4: no 'Invalid NAL unit size' error: $log"
check "bad-nal.mp4 decode errors" "$(grep -c '^Error while decoding stream' <<<"$log")" 1
check "bad-nal.mp4 frames (ffmpeg)" "$(clifr bad-nal.mp4)" 29
check "bad-nal.mp4 frames (ffprobe)" "$(nframes bad-nal.mp4)" 29
ff -i bad-nal-original.mp4 -fps_mode passthrough -f rawvideo -pix_fmt yuv420p "$tmp/orig.yuv"
ffmpeg -nostdin -v quiet -y -i bad-nal.mp4 -fps_mode passthrough -f rawvideo -pix_fmt yuv420p "$tmp/bad.yuv"
python3 "$tools/compare_frames.py" "$tmp/orig.yuv" "$tmp/bad.yuv" $(( 64 * 36 * 3 / 2 )) "$dropped" ||
  fail "bad-nal.mp4: the other frames are not bit-exact"
echo "ok   bad-nal.mp4: frame $dropped (sample @$pos, $size bytes, pts $pts in $(sval bad-nal.mp4 v:0 time_base)) dropped, the other 29 bit-exact"

echo "== 8. raw H.264 Annex B"
ff -f lavfi -i "$(src 25 2)" "${x264[@]}" -bf 2 -g 25 -bsf:v h264_mp4toannexb -f h264 raw.h264
check "raw.h264 start code" "$(head -c 4 raw.h264 | od -An -tx1 | tr -d ' ')" 00000001
check "raw.h264 frames" "$(nframes raw.h264)" 50

echo "== 9. MPEG-TS with a 50,000 s timestamp jump"
ff -f lavfi -i "$(src 25 2)" -f lavfi -i "$(tone 2)" "${x264[@]}" -bf 2 -g 25 "${aac[@]}" -t 2 "${bitexact[@]}" "$tmp/a.ts"
# The second capture carries on the picture (frames 50..99) with a different tone.
ff -f lavfi -i "$(src 25 4)" -f lavfi -i "$(tone 2 880)" -vf "trim=start_frame=50,setpts=PTS-STARTPTS" \
   "${x264[@]}" -bf 2 -g 25 "${aac[@]}" -t 2 -output_ts_offset 50000 "${bitexact[@]}" "$tmp/b.ts"
cat "$tmp/a.ts" "$tmp/b.ts" > jump.ts
# The biggest step between consecutive video packets (decode order) must be ~50000 s, after packet 50.
read -r at step <<<"$(probe -select_streams v:0 -show_packets -show_entries packet=pts_time -of csv=p=0 jump.ts |
                      awk -F, 'NF == 0 { next } n++ && $1 - prev > max { max = $1 - prev; at = n - 1 } { prev = $1 } END { print at, max }')"
awk -v s="$step" 'BEGIN { exit !(s > 49990 && s < 50010) }' || fail "jump.ts: biggest pts step $step s"
check "jump.ts biggest video pts step after packet" "$at" 50
echo "     jump.ts: video pts jumps by $step s after packet $at"
check "jump.ts frames (ffprobe)" "$(nframes jump.ts)" 100
check "jump.ts frames (ffmpeg)" "$(clifr jump.ts)" 100

echo "== 10. general audio+video clip"
ff -f lavfi -i "$(src 25 4)" -f lavfi -i "$(tone 4)" "${x264[@]}" -bf 2 -g 25 "${aac[@]}" -t 4 "${bitexact[@]}" audio-video-4s.mp4
check "audio-video-4s.mp4 frames" "$(nframes audio-video-4s.mp4)" 100
check "audio-video-4s.mp4 keyframes" "$(keytimes audio-video-4s.mp4)" "0.000000 1.000000 2.000000 3.000000"

echo "== 11. containers the first tests did not reach (an adversarial review's cases)"
# Matroska with x264's default B-pyramid: its first packets carry no decoding time.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=4" -c:v libx264 -preset veryfast -threads 1 -bf 3 -g 50 -pix_fmt yuv420p "${bitexact[@]}" pyramid.mkv
check "pyramid.mkv frames" "$(nframes pyramid.mkv)" 100
# MPEG-PS (MPEG-1 video): no index of its own; seeks search by timestamp.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=4" -c:v mpeg1video -g 12 -bf 2 "${bitexact[@]}" mpeg1.mpg
check "mpeg1.mpg frames" "$(nframes mpeg1.mpg)" 100
# MPEG-TS with keyframes every 3 s: tolerant windows with and without a keyframe inside.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=10" -c:v libx264 -preset veryfast -threads 1 -bf 3 -g 75 -keyint_min 75 -sc_threshold 0 \
   -pix_fmt yuv420p -f mpegts "${bitexact[@]}" sparse.ts
check "sparse.ts frames" "$(nframes sparse.ts)" 250
# Full-range BT.709 H.264 (decoded as yuvj420p), several frames.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=2" -c:v libx264 -preset veryfast -threads 1 -pix_fmt yuv420p \
   -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range pc "${bitexact[@]}" yuvj-bt709.mp4
check "yuvj-bt709.mp4 pixel format" "$(sval yuvj-bt709.mp4 v:0 pix_fmt)" yuvj420p
# FLV cut inside a packet.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=4" -c:v libx264 -preset veryfast -threads 1 -bf 0 -pix_fmt yuv420p -f flv "$tmp/whole.flv"
head -c "$(( $(stat -c %s "$tmp/whole.flv") / 2 + 7 ))" "$tmp/whole.flv" > cut.flv
# Matroska with zeroed bytes in the middle: the demuxer resyncs and says so.
ff -f lavfi -i "testsrc2=size=96x64:rate=25:duration=4" -c:v libx264 -preset veryfast -threads 1 -bf 2 -g 25 -pix_fmt yuv420p "${bitexact[@]}" "$tmp/whole.mkv"
cp "$tmp/whole.mkv" zeroed.mkv
dd if=/dev/zero of=zeroed.mkv bs=1 seek="$(( $(stat -c %s "$tmp/whole.mkv") * 2 / 5 ))" count=300 conv=notrunc status=none
grep -q "invalid as first byte of an EBML number" <<<"$(ffmpeg -nostdin -v error -i zeroed.mkv -f null - 2>&1)" || fail "zeroed.mkv: no EBML error"
echo "ok   pyramid.mkv, mpeg1.mpg, sparse.ts, yuvj-bt709.mp4, cut.flv, zeroed.mkv"

echo "== expected.json"
python3 "$tools/reader_expected.py" "$out"
total=$(cat ./*.mp4 ./*.mkv ./*.webm ./*.ts ./*.h264 ./*.mpg ./*.flv | wc -c)
(( total < 1000000 )) || fail "clips total $total bytes"
echo "reader fixtures written to $out ($total bytes of clips)"
