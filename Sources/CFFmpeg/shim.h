// Playhead's bridge to FFmpeg. Swift imports the FFmpeg headers directly; this file only adds
// wrappers for what Swift cannot import: function-like macros and macros built from them, and the
// the two Linux calls the output folder needs that glibc hides without _GNU_SOURCE.
#ifndef PLAYHEAD_CFFMPEG_SHIM_H
#define PLAYHEAD_CFFMPEG_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
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

// renameat2 is declared by glibc only under _GNU_SOURCE, which Swift's Glibc module does not set
// (glibc has exported it since 2.28). RENAME_NOREPLACE is 1 in <linux/fs.h>.
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

// Renames `from` to `to` only when nothing is at `to` (fails with EEXIST otherwise): a name is
// taken atomically or not at all. Works for folders, which link() cannot do.
static inline int playhead_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, 1u);
}

// Caps glibc's malloc arenas (mallopt is in <malloc.h>, which Swift's Glibc module leaves out).
static inline int playhead_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

// fallocate is declared by glibc only under _GNU_SOURCE too. FALLOC_FL_KEEP_SIZE is 1 in
// <linux/falloc.h>: blocks set aside for a file without changing its size, so that it can later
// grow into them on a full disk. Returns 0, or -1 with errno (a file system without it: EOPNOTSUPP).
extern int fallocate(int fd, int mode, off_t offset, off_t len);
static inline int playhead_reserve_room(int fd, int64_t length) {
    return fallocate(fd, 1, 0, (off_t)length);
}

#endif
