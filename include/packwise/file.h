/**
 * @file file.h
 * @brief Files written safely and read without surprises: the rules every packwise
 *        writer follows, for callers (and the `packwise` command) that write their own.
 *
 * **Output** (::pw_output). Bytes go to a temporary beside the destination
 * (`DEST.tmp.<pid>.<n>`: same folder, so same file system), which is synced and
 * renamed over the destination only when every write succeeded
 * (pw_output_commit()). On any failure, and on pw_output_close() without a
 * commit, the temporary is removed: the destination keeps its old bytes, or
 * does not exist, and never holds a partial file. Before anything is created:
 *   - a symbolic link is followed (the file it names is replaced; the link stays);
 *   - a destination that is the same file as one of the caller's inputs (same
 *     device and inode: through symlinks and hard links too) is refused;
 *   - a directory, block device or socket is refused; a character device or a
 *     FIFO (`/dev/null`, a pipe) is written in place, without a temporary, with
 *     ::PW_OUTPUT_SPECIAL_IN_PLACE, and refused without it.
 * A replaced file keeps its permission bits; a new one gets 0666 less the umask.
 * Every message names the destination as the caller gave it.
 *
 * **Input** (pw_input_open()): opened without blocking (a FIFO with no writer
 * cannot hang the caller in open()); directories are refused, and with
 * ::PW_INPUT_REGULAR every other kind that is not a regular file.
 *
 * **Threads.** A ::pw_output is used by one thread at a time.
 */
#ifndef PACKWISE_FILE_H
#define PACKWISE_FILE_H

#include "packwise/base.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An output file being written (see the file's description). */
typedef struct pw_output pw_output;

/** pw_output_open() flag: write a character device or FIFO in place (refused otherwise). */
#define PW_OUTPUT_SPECIAL_IN_PLACE 1u

/**
 * Start writing @p path (flags: PW_OUTPUT_*). @p inputs (@p n_inputs paths;
 * NULL entries skipped) are files the caller reads: a destination that is one
 * of them is refused with ::PW_ERR_INVALID_ARGUMENT. On failure nothing was
 * created and *out is NULL.
 */
PW_API pw_status pw_output_open(pw_context *ctx, const char *path, unsigned flags,
                                const char *const *inputs, size_t n_inputs, pw_output **out);

/** Write to an open descriptor in place (a command's stdout), named @p name in
 *  messages; the descriptor is never closed. */
PW_API pw_status pw_output_open_fd(pw_context *ctx, int fd, const char *name, pw_output **out);

/** Append @p bytes bytes. */
PW_API pw_status pw_output_write(pw_context *ctx, pw_output *output, const void *data,
                                 uint64_t bytes);

/** Finish: sync, close and rename over the destination (then sync its folder).
 *  On failure everything is undone as by pw_output_close(). Either way the
 *  output is finished: only pw_output_close() may follow. */
PW_API pw_status pw_output_commit(pw_context *ctx, pw_output *output);

/** The file being written now: the temporary, or the destination itself when written
 *  in place; "" once finished. Owned by the output. */
PW_API const char *pw_output_path(const pw_output *output);

/** The file a commit replaces (symbolic links resolved); "" when written in place.
 *  Owned by the output. */
PW_API const char *pw_output_destination(const pw_output *output);

/** Release the output; before a commit, remove the temporary (the destination is
 *  untouched). Accepts NULL. */
PW_API void pw_output_close(pw_output *output);

/** pw_input_open() flag: refuse what is not a regular file. */
#define PW_INPUT_REGULAR 1u

/**
 * Open @p path to read (O_RDONLY | O_CLOEXEC), without blocking in open();
 * *fd gets the descriptor (the caller closes it) and @p st, when not NULL, the
 * file's status. Directories are refused (::PW_ERR_IO), and with
 * ::PW_INPUT_REGULAR every other kind that is not a regular file.
 */
PW_API pw_status pw_input_open(pw_context *ctx, const char *path, unsigned flags, int *fd,
                               struct stat *st);

/** "a regular file", "a FIFO", "a directory", ... for @p mode (a stat st_mode), for messages. */
PW_API const char *pw_file_kind_name(unsigned mode);

#ifdef __cplusplus
}
#endif

#endif
