#!/usr/bin/env python3
"""Write DIR/expected.json: what FFmpeg's own tools say of every clip in DIR.

usage: reader_expected.py DIR

For each media file (.mp4 .mkv .webm .ts .h264) it records, keyed by file name:
  bytes                       file size
  format                      ffprobe format_name
  video (first video stream, when there is one):
    codec, width, height (stored/coded size), pix_fmt, color_space, color_range,
    color_primaries, color_transfer, time_base, start_pts, duration_ts (ffprobe -show_streams;
    null when ffprobe has none), rotation (ffprobe's display-matrix side data, null if none),
    tkhd_matrix ([a, b, c, d] of the video tkhd, MP4 only),
    displayed_width/height (size of the first frame ffmpeg outputs with its default
      autorotation),
    frame_count, frames {pts, pkt_dts, best_effort_timestamp, pkt_duration, key_frame}
      (parallel arrays, one entry per decoded frame in presentation order: ffprobe -show_frames
      sorted by best_effort_timestamp; null where ffprobe prints nothing),
    frame_times (best_effort_timestamp in seconds, rounded to 1e-6),
    keyframe_times (frame_times of decoded frames with key_frame 1),
    keyframe_packet_pts (pts of demuxed packets flagged K, in the stream time base),
    packet_count, packets {pts, dts, key} (parallel arrays, demuxed packets in decode order),
    r_frame_rate, avg_frame_rate, has_b_frames (ffprobe -show_streams)
  audio (first audio stream, when there is one):
    codec, sample_rate, channels, time_base, start_pts, duration_ts, packet_count,
    decoded_frame_count, first_frame_pts, decoded_samples (sum of nb_samples of the frames
    ffprobe decodes), decoded_samples_ffmpeg (samples per channel ffmpeg writes when
    decoding the stream to s16)
Output is deterministic: sorted keys, same clips in -> same bytes out.
"""
import json
import os
import subprocess
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ next to the committed tools
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import patch_tkhd  # noqa: E402

MEDIA_EXT = (".mp4", ".mkv", ".webm", ".ts", ".h264", ".mpg", ".flv")


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False).stdout


def probe(path, *args):
    out = run(["ffprobe", "-v", "error", *args, "-of", "json", path])
    return json.loads(out or b"{}")


def num(v):
    if v is None or v == "N/A":
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def seconds(ts, tb):
    return None if ts is None else round(float(ts * tb), 6)


def displayed_size(path):
    out = run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-frames:v", "1",
               "-f", "yuv4mpegpipe", "-pix_fmt", "yuv420p", "-"])
    header = out.split(b"\n", 1)[0].split()
    w = [int(t[1:]) for t in header if t.startswith(b"W")]
    h = [int(t[1:]) for t in header if t.startswith(b"H")]
    return (w[0] if w else None), (h[0] if h else None)


def tkhd_matrix(path):
    try:
        with open(path, "rb") as f:
            buf = f.read()
        traks = list(patch_tkhd.video_traks(buf))
        if len(traks) != 1:
            return None
        s, e = traks[0]
        tkhd = patch_tkhd.child(buf, s, e, b"tkhd")
        version = buf[tkhd[0]]
        m = tkhd[0] + 4 + (32 if version == 1 else 20) + 16
        a, b, _u, c, d = (int.from_bytes(buf[m + 4 * i:m + 4 * i + 4], "big", signed=True) for i in range(5))
        return [x / 65536 if x % 65536 else x // 65536 for x in (a, b, c, d)]
    except (ValueError, IndexError, TypeError):
        return None


def video_info(path, st):
    tb = Fraction(st["time_base"])
    rotation = None
    for sd in st.get("side_data_list", []):
        if "rotation" in sd:
            rotation = num(sd["rotation"])
    frames = probe(path, "-select_streams", "v:0", "-show_frames", "-show_entries",
                   "frame=pts,pkt_dts,best_effort_timestamp,pkt_duration,key_frame").get("frames", [])
    frames = [{k: num(f.get(k)) for k in ("pts", "pkt_dts", "best_effort_timestamp", "pkt_duration", "key_frame")}
              for f in frames]
    frames.sort(key=lambda f: (f["best_effort_timestamp"] is None, f["best_effort_timestamp"] or 0))
    packets = probe(path, "-select_streams", "v:0", "-show_packets", "-show_entries",
                    "packet=pts,dts,flags").get("packets", [])
    dw, dh = displayed_size(path)
    times = [seconds(f["best_effort_timestamp"], tb) for f in frames]
    info = {
        "codec": st.get("codec_name"),
        "width": st.get("width"),
        "height": st.get("height"),
        "pix_fmt": st.get("pix_fmt"),
        "color_space": st.get("color_space"),
        "color_range": st.get("color_range"),
        "color_primaries": st.get("color_primaries"),
        "color_transfer": st.get("color_transfer"),
        "time_base": st["time_base"],
        "start_pts": num(st.get("start_pts")),
        "duration_ts": num(st.get("duration_ts")),
        "rotation": rotation,
        "displayed_width": dw,
        "displayed_height": dh,
        "frame_count": len(frames),
        "frames": {k: [f[k] for f in frames]
                   for k in ("pts", "pkt_dts", "best_effort_timestamp", "pkt_duration", "key_frame")},
        "frame_times": times,
        "keyframe_times": [t for t, f in zip(times, frames) if f["key_frame"] == 1],
        "keyframe_packet_pts": sorted((num(p.get("pts")) for p in packets if "K" in p.get("flags", "")),
                                      key=lambda v: (v is None, v or 0)),
        "packet_count": len(packets),
        "packets": {"pts": [num(p.get("pts")) for p in packets],
                    "dts": [num(p.get("dts")) for p in packets],
                    "key": [int("K" in p.get("flags", "")) for p in packets]},
        "r_frame_rate": st.get("r_frame_rate"),
        "avg_frame_rate": st.get("avg_frame_rate"),
        "has_b_frames": st.get("has_b_frames"),
    }
    if path.endswith(".mp4"):
        info["tkhd_matrix"] = tkhd_matrix(path)
    return info


def audio_info(path, st):
    frames = probe(path, "-select_streams", "a:0", "-show_frames", "-show_entries",
                   "frame=pts,nb_samples").get("frames", [])
    packets = probe(path, "-select_streams", "a:0", "-show_packets", "-show_entries",
                    "packet=pts").get("packets", [])
    channels = int(st.get("channels") or 1)
    pcm = run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le",
               "-c:a", "pcm_s16le", "-"])
    return {
        "codec": st.get("codec_name"),
        "sample_rate": num(st.get("sample_rate")),
        "channels": channels,
        "time_base": st["time_base"],
        "start_pts": num(st.get("start_pts")),
        "duration_ts": num(st.get("duration_ts")),
        "packet_count": len(packets),
        "decoded_frame_count": len(frames),
        "first_frame_pts": num(frames[0].get("pts")) if frames else None,
        "decoded_samples": sum(int(f.get("nb_samples", 0)) for f in frames),
        "decoded_samples_ffmpeg": len(pcm) // (2 * channels),
    }


def clip_info(path):
    info = probe(path, "-show_format", "-show_streams")
    entry = {"bytes": os.path.getsize(path), "format": info.get("format", {}).get("format_name")}
    streams = info.get("streams", [])
    v = [s for s in streams if s.get("codec_type") == "video"]
    a = [s for s in streams if s.get("codec_type") == "audio"]
    if v:
        entry["video"] = video_info(path, v[0])
    if a:
        entry["audio"] = audio_info(path, a[0])
    return entry


def dump(o, level=0):
    """JSON with sorted keys; lists of scalars on one line."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(o, dict):
        if not o:
            return "{}"
        items = (inner + json.dumps(k) + ": " + dump(o[k], level + 1) for k in sorted(o))
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(o, list) and any(isinstance(x, (dict, list)) for x in o):
        return "[\n" + ",\n".join(inner + dump(x, level + 1) for x in o) + "\n" + pad + "]"
    return json.dumps(o)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    d = argv[1]
    clips = sorted(n for n in os.listdir(d) if n.endswith(MEDIA_EXT))
    out = {n: clip_info(os.path.join(d, n)) for n in clips}
    with open(os.path.join(d, "expected.json"), "w") as f:
        f.write(dump(out) + "\n")
    print("expected.json: %d clips" % len(out))


if __name__ == "__main__":
    main(sys.argv)
