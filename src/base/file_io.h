/*
 * Files the library and the command write and read, one way everywhere (issue 13):
 *
 * Output: bytes go to a temporary beside the destination ("DEST.tmp.<pid>.<n>", same
 * folder, so same file system), which is fsync'ed and renamed over the destination
 * only when every write succeeded; on any failure the temporary is removed, so the
 * destination holds its old bytes (or does not exist) and never a partial file.
 * Before anything is created:
 *   - a symbolic link is followed: the file it names is replaced, the link stays;
 *   - a destination that is the same file as an input (same device and inode, so
 *     through symlinks and hard links too) is refused;
 *   - a directory, block device or socket is refused; a character device or FIFO
 *     (/dev/null, a pipe) is written in place, without a temporary, with
 *     PW__OUT_SPECIAL_IN_PLACE, and refused without it (caches and GGUF files are
 *     mapped later, so they must be regular files).
 * A replaced file keeps its permission bits (not its owner, nor its other hard links:
 * they keep the old bytes); a new one gets 0666 less the umask.
 * Every message names the destination as the caller gave it.
 *
 * Input: pw__input_open opens with O_NONBLOCK, so a FIFO without a writer cannot
 * block in open(), then refuses what is not a regular file when one is needed.
 */
#ifndef PACKWISE_FILE_IO_H
#define PACKWISE_FILE_IO_H

#include "base/internal.h"

#include <limits.h>
#include <sys/stat.h>

#define PW__OUT_SPECIAL_IN_PLACE 1u /* write a character device or FIFO in place */

typedef struct pw__outfile {
    int fd;               /* -1 when closed */
    int in_place;         /* writing the destination itself (device, FIFO, stdout) */
    int borrowed_fd;      /* fd is not ours to close (stdout) */
    uint64_t pos;         /* where pw__outfile_write writes next */
    char name[PATH_MAX];  /* the destination as the caller named it */
    char dest[PATH_MAX];  /* the file replaced on commit: symlinks resolved */
    char tmp[PATH_MAX];   /* the temporary; "" when there is none */
} pw__outfile;

/* A closed outfile: pw__outfile_abort on it does nothing. */
void pw__outfile_init(pw__outfile *f);

/* Prepare to write `path` (flags: PW__OUT_*). `inputs` (n_inputs paths, NULL entries
 * skipped) are files the caller reads: an output that is one of them is refused. On
 * failure nothing was created and f may still be passed to pw__outfile_abort. */
pw_status pw__outfile_open(pw_context *ctx, pw__outfile *f, const char *path, unsigned flags,
                           const char *const *inputs, size_t n_inputs);

/* Write to an already open descriptor in place (the command's stdout); never closed. */
void pw__outfile_borrow(pw__outfile *f, int fd, const char *name);

/* Append bytes at the current position. */
pw_status pw__outfile_write(pw_context *ctx, pw__outfile *f, const void *data, uint64_t bytes);

/* Write bytes at an offset (not in place). Does not move the current position. */
pw_status pw__outfile_pwrite(pw_context *ctx, pw__outfile *f, const void *data, uint64_t bytes,
                             uint64_t offset);

/* Move the current position on by `bytes` zeros: a hole in a temporary, zeros written in place. */
pw_status pw__outfile_skip(pw_context *ctx, pw__outfile *f, uint64_t bytes);

/* Finish: size the temporary to `size` bytes (PW__OUT_KEEP_SIZE: as written), fsync,
 * close, rename over the destination, fsync its folder. On failure everything is undone
 * as by pw__outfile_abort. Either way f is closed afterwards. */
#define PW__OUT_KEEP_SIZE UINT64_MAX
pw_status pw__outfile_commit(pw_context *ctx, pw__outfile *f, uint64_t size);

/* Close and remove the temporary (if any); the destination is untouched. Safe to call twice. */
void pw__outfile_abort(pw__outfile *f);

/* Refuse `output` when it is the same file (device and inode) as `input`; both may be missing. */
pw_status pw__refuse_same_file(pw_context *ctx, const char *output, const char *input);

#define PW__IN_REGULAR 1u /* refuse what is not a regular file */

/* Open `path` to read without blocking in open(); fills *st. Directories are refused;
 * with PW__IN_REGULAR every other kind that is not a regular file is too. */
pw_status pw__input_open(pw_context *ctx, const char *path, unsigned flags, int *fd, struct stat *st);

/* "a FIFO", "a directory", ... for messages. */
const char *pw__file_kind(mode_t mode);

#endif
