// The three Linux calls Playhead needs that Swift's Glibc module does not show: glibc declares
// them only under _GNU_SOURCE (or in <malloc.h>, which the module leaves out). Nothing else.
#ifndef PLAYHEAD_SYSTEM_SHIM_H
#define PLAYHEAD_SYSTEM_SHIM_H

#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/types.h>

// renameat2 (glibc has exported it since 2.28). RENAME_NOREPLACE is 1 in <linux/fs.h>.
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

// Renames `from` to `to` only when nothing is at `to` (fails with EEXIST otherwise): a name is
// taken atomically or not at all. Works for folders, which link() cannot do.
static inline int playhead_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, 1u);
}

// Caps glibc's malloc arenas (mallopt and M_ARENA_MAX are in <malloc.h>).
static inline int playhead_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

// fallocate with FALLOC_FL_KEEP_SIZE (1 in <linux/falloc.h>): blocks set aside for a file without
// changing its size, so that it can later grow into them on a full disk. Returns 0, or -1 with
// errno (a file system without it: EOPNOTSUPP).
extern int fallocate(int fd, int mode, off_t offset, off_t len);
static inline int playhead_reserve_room(int fd, int64_t length) {
    return fallocate(fd, 1, 0, (off_t)length);
}

#endif
