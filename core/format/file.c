/*
 * core/format/file.c - the bytes of an engine file, read into memory
 * mica owns (the engine keeps it and its layers may use their weights in
 * place); released after the engine's layers (mica__bytes_release).
 *
 * Not used from a mapping of the file: a file replaced in place while an
 * engine serves from it (`cp new.mica served.mica` truncates and rewrites
 * the same inode) took the mapped pages away, and the next read of a
 * weight was SIGBUS (issue 25).  A regular file is read into anonymous
 * pages of its size (made read-only once read); anything else, or where
 * that fails, into a malloc'd buffer.  The cost is one copy of the file
 * (bench/README.md: the 105 MB engine's load; huge pages made the warm
 * load 2x faster there but the cold one 4x slower, compaction).
 */
#include <config.h>

#include "graph.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(HAVE_SYS_MMAN_H) && defined(HAVE_MMAP)
#include <sys/mman.h>
#define MICA__MMAP 1
#endif

void mica__bytes_release(void *p, size_t size, int32_t unmap)
{
#ifdef MICA__MMAP
    if (unmap) {
        munmap(p, size);
        return;
    }
#else
    (void)size;
    (void)unmap;
#endif
    free(p);
}

/* The rest of fd (at its start) read into a fresh buffer; `hint` bytes
 * expected. */
static mica_status_t read_all(mica_context_t *ctx, const char *path, int fd,
                              size_t hint, unsigned char **data, size_t *size)
{
    size_t cap = hint + 1, len = 0;
    unsigned char *buf = malloc(cap), *grown;
    ssize_t n = 0;
    mica_status_t st = MICA_OK;

    while (buf && (n = read(fd, buf + len, cap - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        len += (size_t)n;
        if (len == cap) {
            if (!(grown = realloc(buf, 2 * cap)))
                break;
            buf = grown;
            cap *= 2;
        }
    }
    if (!buf || (n > 0 && len == cap))
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory for '%s'",
                        path);
    else if (n < 0)
        st = mica__fail(ctx, MICA_ERR_IO, "cannot read engine file '%s': %s",
                        path, strerror(errno));
    if (st != MICA_OK) {
        free(buf);
        buf = NULL;
        len = 0;
    }
    *data = buf;
    *size = len;
    return st;
}

/*
 * The whole file read into memory of its own: anonymous pages (*unmap 1)
 * where it can, else a fresh buffer (*unmap 0).  Release with
 * mica__bytes_release.
 */
mica_status_t mica__engine_file_map(mica_context_t *ctx, const char *path,
                                    unsigned char **data, size_t *size,
                                    int *unmap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    mica_status_t st;

    *data = NULL;
    *size = 0;
    *unmap = 0;
    if (fd < 0)
        return mica__fail(ctx, MICA_ERR_IO, "cannot open engine file '%s': %s",
                          path, strerror(errno));
    if (fstat(fd, &sb) != 0) {
        st = mica__fail(ctx, MICA_ERR_IO, "cannot read engine file '%s': %s",
                        path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        st = mica__fail(ctx, MICA_ERR_IO, "cannot read engine file '%s': is "
                        "a directory", path);
        goto done;
    }
#ifdef MICA__MMAP
    if (S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uintmax_t)sb.st_size <= SIZE_MAX) {
        size_t n = (size_t)sb.st_size, got = 0;
        unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            ssize_t r = 0;
            while (got < n && ((r = read(fd, p + got, n - got)) > 0 ||
                               (r < 0 && errno == EINTR)))
                got += r > 0 ? (size_t)r : 0;
            if (got != n) {
                st = mica__fail(ctx, MICA_ERR_IO, "cannot read engine file "
                                "'%s': %s", path, r < 0 ? strerror(errno)
                                : "it shrank while being read");
                munmap(p, n);
                goto done;
            }
            mprotect(p, n, PROT_READ);
            *data = p;
            *size = n;
            *unmap = 1;
            st = MICA_OK;
            goto done;
        }
    }
#endif
    /* Not a regular file, or no mapping: read it. */
    st = read_all(ctx, path, fd,
                  S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size
                                                        : 65536,
                  data, size);
done:
    close(fd);
    return st;
}
