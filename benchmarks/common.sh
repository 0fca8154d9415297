# Shared by the benchmark scripts: `source benchmarks/common.sh` from the repository's top folder.
# Builds the release binary (installing what is missing) into $bin, and makes test clips on demand.
set -euo pipefail
scripts/setup.sh release >/dev/null
# What only the benchmarks use (the playout checks read hours of sound with numpy; status by curl).
source scripts/lib/apt.sh
apt_install_missing benchmarks python3-numpy curl
bin="$(swift build -c release --show-bin-path)/playhead"
mkdir -p .bench

# bench_clip NAME SECONDS GOP: a 1080p30 H.264 test pattern with B-frames in .bench/NAME (kept between runs).
bench_clip() {
  local path=".bench/$1"
  [ -f "$path" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$2" \
    -c:v libx264 -preset fast -crf 23 -bf 2 -g "$3" -keyint_min "$3" -sc_threshold 0 -pix_fmt yuv420p "$path"
  echo "$path"
}

# bench_av_clip NAME SECONDS: the same picture with a 48 kHz stereo AAC track.
bench_av_clip() {
  local path=".bench/$1"
  [ -f "$path" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$2" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$2" -ac 2 \
    -c:v libx264 -preset fast -crf 23 -bf 2 -g 250 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest "$path"
  echo "$path"
}
