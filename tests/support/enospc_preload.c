/*
 * A full file system without privileges, for tests (LD_PRELOAD=libpw_enospc.so):
 *
 *   PW_ENOSPC_AFTER=N   writes to regular files succeed for N bytes in all (counted over
 *                       every descriptor of the process), then fail with ENOSPC; the write
 *                       that crosses N writes the bytes up to N first, as a full disk does.
 *   PW_ENOSPC_FSYNC=1   fsync and fdatasync of a regular file fail with ENOSPC (a file
 *                       system that finds out at sync time: NFS, thin provisioning).
 *
 * Writes to pipes, terminals and devices are never touched, so messages on stderr still
 * arrive. Interposes write, pwrite, pwrite64, writev, pwritev, fsync and fdatasync; the
 * library and the command write files through those (base/file_io.c), not through stdio,
 * whose internal writes could not be interposed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_llong written;

/* How many of `n` bytes to a regular file may go through; -1 when fd is not one. */
static long long allowance(int fd, size_t n) {
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return -1;
    const char *e = getenv("PW_ENOSPC_AFTER");
    if (e == NULL || *e == '\0') return (long long)n;
    const long long limit = atoll(e);
    const long long before = atomic_fetch_add(&written, (long long)n);
    if (before >= limit) return 0;
    return limit - before < (long long)n ? limit - before : (long long)n;
}

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef int (*sync_fn)(int);

/* The next definition of `name` (libc's, or the ASan runtime's before it). */
#define REAL(name, type)                                                                   \
    static type real_##name;                                                               \
    if (real_##name == NULL) *(void **)&real_##name = dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write, write_fn);
    const long long ok = allowance(fd, n);
    if (ok < 0) return real_write(fd, buf, n);
    if (ok == 0 && n > 0) return errno = ENOSPC, -1;
    return real_write(fd, buf, (size_t)ok);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite, pwrite_fn);
    const long long ok = allowance(fd, n);
    if (ok < 0) return real_pwrite(fd, buf, n, off);
    if (ok == 0 && n > 0) return errno = ENOSPC, -1;
    return real_pwrite(fd, buf, (size_t)ok, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    return pwrite(fd, buf, n, off);
}

/* Vectored writes: all or nothing (nothing here writes them to files; enough for a test). */
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(writev, writev_fn);
    size_t n = 0;
    for (int i = 0; i < cnt; ++i) n += iov[i].iov_len;
    const long long ok = allowance(fd, n);
    if (ok >= 0 && ok < (long long)n) return errno = ENOSPC, -1;
    return real_writev(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    REAL(pwritev, pwritev_fn);
    size_t n = 0;
    for (int i = 0; i < cnt; ++i) n += iov[i].iov_len;
    const long long ok = allowance(fd, n);
    if (ok >= 0 && ok < (long long)n) return errno = ENOSPC, -1;
    return real_pwritev(fd, iov, cnt, off);
}

static int sync_fails(int fd) {
    struct stat sb;
    const char *e = getenv("PW_ENOSPC_FSYNC");
    return e != NULL && *e == '1' && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

int fsync(int fd) {
    REAL(fsync, sync_fn);
    if (sync_fails(fd)) return errno = ENOSPC, -1;
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync, sync_fn);
    if (sync_fails(fd)) return errno = ENOSPC, -1;
    return real_fdatasync(fd);
}
