/* Safe output and input files (file_io.h). */
#include "base/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One write call moves at most 1 GiB (Linux caps a write near 2 GiB). */
#define CHUNK_BYTES ((uint64_t)1 << 30)

const char *pw__file_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

void pw__outfile_init(pw__outfile *f) {
    f->fd = -1;
    f->in_place = 0;
    f->borrowed_fd = 0;
    f->pos = 0;
    f->name[0] = f->dest[0] = f->tmp[0] = '\0';
}

void pw__outfile_borrow(pw__outfile *f, int fd, const char *name) {
    pw__outfile_init(f);
    f->fd = fd;
    f->in_place = 1;
    f->borrowed_fd = 1;
    pw__strlcpy(f->name, name, sizeof f->name);
}

static int same_inode(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

pw_status pw__refuse_same_file(pw_context *ctx, const char *output, const char *input) {
    struct stat so, si;
    if (output == NULL || input == NULL || stat(output, &so) != 0 || stat(input, &si) != 0)
        return PW_OK;
    PW__FAIL_IF(same_inode(&so, &si), ctx, PW_ERR_INVALID_ARGUMENT,
                "'%s' is the same file as the input '%s'; write the output to another path",
                output, input);
    return PW_OK;
}

/* dest = realpath(dirname(path)) + "/" + basename(path): where a new file goes. */
static pw_status resolve_new(pw_context *ctx, pw__outfile *f, const char *path) {
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    PW__FAIL_IF(*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0, ctx,
                PW_ERR_INVALID_ARGUMENT, "'%s' names a folder, not a file", f->name);
    if (slash == NULL) pw__strlcpy(dir, ".", sizeof dir);
    else if (slash == path) pw__strlcpy(dir, "/", sizeof dir);
    else {
        const size_t n = (size_t)(slash - path);
        PW__FAIL_IF(n >= sizeof dir, ctx, PW_ERR_INVALID_ARGUMENT, "'%.200s...': path too long",
                    f->name);
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    char real[PATH_MAX];
    PW__FAIL_IF(realpath(dir, real) == NULL, ctx, PW_ERR_IO, "cannot create '%s': folder '%s': %s",
                f->name, dir, strerror(errno));
    const int n = snprintf(f->dest, sizeof f->dest, "%s%s%s", real,
                           real[strlen(real) - 1] == '/' ? "" : "/", base);
    PW__FAIL_IF(n < 0 || (size_t)n >= sizeof f->dest, ctx, PW_ERR_INVALID_ARGUMENT,
                "'%.200s...': path too long", f->name);
    return PW_OK;
}

/* Create the temporary beside f->dest: O_EXCL under a fresh name, so nothing is overwritten. */
static pw_status create_temporary(pw_context *ctx, pw__outfile *f, const struct stat *old) {
    static atomic_uint counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int err = EEXIST;
    for (int attempt = 0; attempt < 64 && err == EEXIST; ++attempt) {
        const unsigned c = atomic_fetch_add(&counter, 1u);
        const unsigned salt = (unsigned)ts.tv_nsec ^ (c * 2654435761u);
        const int n = snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld.%x", f->dest, (long)getpid(), salt);
        if (n < 0 || (size_t)n >= sizeof f->tmp) {
            err = ENAMETOOLONG;
            break;
        }
        f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        err = f->fd < 0 ? errno : 0;
    }
    if (f->fd < 0) {
        f->tmp[0] = '\0';
        return pw__fail(ctx, PW_ERR_IO, "cannot create a temporary beside '%s' (to write it "
                        "safely): %s", f->name, strerror(err));
    }
    /* A replaced file keeps its permission bits (a new one has 0666 less the umask). */
    if (old != NULL && fchmod(f->fd, old->st_mode & 07777) != 0) {
        err = errno;
        pw__outfile_abort(f);
        return pw__fail(ctx, PW_ERR_IO, "cannot give the temporary beside '%s' the file's "
                        "permissions: %s", f->name, strerror(err));
    }
    return PW_OK;
}

pw_status pw__outfile_open(pw_context *ctx, pw__outfile *f, const char *path, unsigned flags,
                           const char *const *inputs, size_t n_inputs) {
    pw__outfile_init(f);
    PW__FAIL_IF(path == NULL || *path == '\0', ctx, PW_ERR_INVALID_ARGUMENT,
                "the output path is empty");
    PW__FAIL_IF(strlen(path) >= sizeof f->name, ctx, PW_ERR_INVALID_ARGUMENT,
                "'%.200s...': path too long", path);
    pw__strlcpy(f->name, path, sizeof f->name);
    struct stat st;
    const int exists = stat(path, &st) == 0;
    if (!exists) {
        const int err = errno;
        struct stat lst;
        PW__FAIL_IF(err == ENOENT && lstat(path, &lst) == 0, ctx, PW_ERR_INVALID_ARGUMENT,
                    "'%s' is a symbolic link to a missing file; name the file itself", path);
        PW__FAIL_IF(err != ENOENT, ctx, PW_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    for (size_t i = 0; exists && i < n_inputs; ++i) {
        struct stat si;
        if (inputs[i] == NULL || stat(inputs[i], &si) != 0) continue;
        PW__FAIL_IF(same_inode(&st, &si), ctx, PW_ERR_INVALID_ARGUMENT,
                    "'%s' is the same file as the input '%s'; write the output to another path",
                    path, inputs[i]);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        PW__FAIL_IF(S_ISDIR(st.st_mode), ctx, PW_ERR_INVALID_ARGUMENT,
                    "'%s' is a directory; name a file", path);
        PW__FAIL_IF(!(flags & PW__OUT_SPECIAL_IN_PLACE) ||
                        !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)),
                    ctx, PW_ERR_INVALID_ARGUMENT,
                    "'%s' is %s, not a regular file; it is left alone (name a regular file)", path,
                    pw__file_kind(st.st_mode));
        /* A FIFO waits for its reader here, as a shell redirection does. */
        f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        PW__FAIL_IF(f->fd < 0, ctx, PW_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        f->in_place = 1;
        return PW_OK;
    }
    if (exists) {
        PW__FAIL_IF(realpath(path, f->dest) == NULL, ctx, PW_ERR_IO, "cannot write '%s': %s", path,
                    strerror(errno));
    } else {
        PW__TRY(resolve_new(ctx, f, path));
    }
    return create_temporary(ctx, f, exists ? &st : NULL);
}

static pw_status write_failed(pw_context *ctx, pw__outfile *f, uint64_t offset, int err) {
    const pw_status st =
        pw__fail(ctx, PW_ERR_IO, "cannot write '%s' (at byte offset %" PRIu64 "): %s%s", f->name,
                 offset, strerror(err),
                 f->in_place ? "" : "; the temporary is removed and the file left as it was");
    pw__outfile_abort(f);
    return st;
}

static pw_status write_at(pw_context *ctx, pw__outfile *f, const void *data, uint64_t bytes,
                          uint64_t offset, int sequential) {
    PW__FAIL_IF(f->fd < 0, ctx, PW_ERR_INVALID_ARGUMENT, "'%s' is not open for writing", f->name);
    const uint8_t *p = data;
    while (bytes > 0) {
        const size_t n = (size_t)(bytes < CHUNK_BYTES ? bytes : CHUNK_BYTES);
        const ssize_t w = sequential ? write(f->fd, p, n) : pwrite(f->fd, p, n, (off_t)offset);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return write_failed(ctx, f, offset, w < 0 ? errno : ENOSPC);
        p += w;
        bytes -= (uint64_t)w;
        offset += (uint64_t)w;
    }
    return PW_OK;
}

pw_status pw__outfile_write(pw_context *ctx, pw__outfile *f, const void *data, uint64_t bytes) {
    /* In place (a pipe, a device) there are no offsets: write in order. */
    PW__TRY(write_at(ctx, f, data, bytes, f->pos, f->in_place));
    f->pos += bytes;
    return PW_OK;
}

pw_status pw__outfile_pwrite(pw_context *ctx, pw__outfile *f, const void *data, uint64_t bytes,
                             uint64_t offset) {
    PW__FAIL_IF(f->in_place, ctx, PW_ERR_INVALID_ARGUMENT,
                "'%s' is written in place, in order: no writes at an offset", f->name);
    return write_at(ctx, f, data, bytes, offset, 0);
}

pw_status pw__outfile_skip(pw_context *ctx, pw__outfile *f, uint64_t bytes) {
    if (!f->in_place) {
        PW__FAIL_IF(f->pos + bytes < f->pos, ctx, PW_ERR_OVERFLOW, "'%s': offset overflows",
                    f->name);
        f->pos += bytes;
        return PW_OK;
    }
    static const uint8_t zeros[4096];
    while (bytes > 0) {
        const uint64_t n = bytes < sizeof zeros ? bytes : sizeof zeros;
        PW__TRY(pw__outfile_write(ctx, f, zeros, n));
        bytes -= n;
    }
    return PW_OK;
}

/* Make the rename itself durable (best effort: some file systems refuse fsync on folders). */
static void sync_folder(const char *dest) {
    char dir[PATH_MAX];
    pw__strlcpy(dir, dest, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) return;
    if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
    const int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
}

pw_status pw__outfile_commit(pw_context *ctx, pw__outfile *f, uint64_t size) {
    PW__FAIL_IF(f->fd < 0, ctx, PW_ERR_INVALID_ARGUMENT, "'%s' is not open for writing", f->name);
    if (f->in_place) {
        const int borrowed = f->borrowed_fd, fd = f->fd;
        f->fd = -1;
        /* Nothing to sync on a pipe or a device; a close error is still a write error. */
        PW__FAIL_IF(!borrowed && close(fd) != 0, ctx, PW_ERR_IO, "cannot write '%s': %s",
                    f->name, strerror(errno));
        return PW_OK;
    }
    const char *step = NULL;
    if (size != PW__OUT_KEEP_SIZE && ftruncate(f->fd, (off_t)size) != 0) step = "cannot size";
    else if (fsync(f->fd) != 0) step = "cannot write (fsync)";
    if (step == NULL) {
        const int rc = close(f->fd);
        f->fd = -1;
        if (rc != 0) step = "cannot write (close)";
    }
    if (step != NULL) {
        const int err = errno;
        pw__outfile_abort(f);
        return pw__fail(ctx, PW_ERR_IO, "%s '%s': %s; the temporary is removed and the file "
                        "left as it was", step, f->name, strerror(err));
    }
    if (rename(f->tmp, f->dest) != 0) {
        const int err = errno;
        const pw_status st = pw__fail(ctx, PW_ERR_IO, "cannot rename the temporary '%s' to '%s': %s",
                                      f->tmp, f->name, strerror(err));
        pw__outfile_abort(f);
        return st;
    }
    f->tmp[0] = '\0';
    sync_folder(f->dest);
    return PW_OK;
}

void pw__outfile_abort(pw__outfile *f) {
    if (f == NULL) return;
    if (f->fd >= 0 && !f->borrowed_fd) close(f->fd);
    f->fd = -1;
    if (f->tmp[0] != '\0') unlink(f->tmp);
    f->tmp[0] = '\0';
}

pw_status pw__input_open(pw_context *ctx, const char *path, unsigned flags, int *fd,
                         struct stat *st) {
    *fd = -1;
    /* O_NONBLOCK: opening a FIFO that has no writer would otherwise wait forever. */
    const int d = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    PW__FAIL_IF(d < 0, ctx, PW_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(d, st) != 0) {
        const int err = errno;
        close(d);
        return pw__fail(ctx, PW_ERR_IO, "%s: cannot stat: %s", path, strerror(err));
    }
    if (S_ISDIR(st->st_mode) || ((flags & PW__IN_REGULAR) && !S_ISREG(st->st_mode))) {
        close(d);
        return pw__fail(ctx, PW_ERR_IO, "%s: is %s, not a regular file", path,
                        pw__file_kind(st->st_mode));
    }
    const int fl = fcntl(d, F_GETFL);
    if (fl < 0 || fcntl(d, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        const int err = errno;
        close(d);
        return pw__fail(ctx, PW_ERR_IO, "%s: %s", path, strerror(err));
    }
    *fd = d;
    return PW_OK;
}
