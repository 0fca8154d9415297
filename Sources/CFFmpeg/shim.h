// Playhead's bridge to FFmpeg. Swift imports the FFmpeg headers directly; this file only adds
// wrappers for what Swift cannot import: function-like macros and macros built from them. Only the
// PlayheadMedia target imports it (Package.swift).
#ifndef PLAYHEAD_CFFMPEG_SHIM_H
#define PLAYHEAD_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/display.h>
#include <libavutil/encryption_info.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/parseutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

// AVERROR(e) is a function-like macro: Swift cannot call it.
static inline int playhead_averror(int posix_errno) { return AVERROR(posix_errno); }

// AVERROR_EOF is built from FFERRTAG, a function-like macro, so Swift does not import it.
static inline int playhead_averror_eof(void) { return AVERROR_EOF; }

// AVERROR_EXIT (interrupted by the interrupt callback), same reason.
static inline int playhead_averror_exit(void) { return AVERROR_EXIT; }

// AVERROR_INVALIDDATA, same reason.
static inline int playhead_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }

// AVERROR_DECODER_NOT_FOUND, same reason.
static inline int playhead_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }

// AV_NOPTS_VALUE is an int64 cast of a hex literal; Swift imports it inconsistently across versions.
static inline int64_t playhead_nopts_value(void) { return AV_NOPTS_VALUE; }

// AV_TIME_BASE_Q is a compound literal, which Swift cannot import.
static inline AVRational playhead_time_base_q(void) { return AV_TIME_BASE_Q; }

#endif
