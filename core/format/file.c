/*
 * core/format/file.c - the bytes of an engine file: mapped where mmap
 * exists (the engine keeps the mapping and its layers may use their
 * weights in place), else read into one buffer; released after the
 * engine's layers (mica__bytes_release).
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
 * The whole file: mapped read-only (*unmap 1) where it can be, else read
 * into a fresh buffer (*unmap 0).  Release with mica__bytes_release.
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
        void *p;
        int populate = 0;
#ifdef MAP_POPULATE
        /* The checksum reads every page next: map them all at once. */
        populate = MAP_POPULATE;
#endif
        p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | populate,
                 fd, 0);
        if (p != MAP_FAILED) {
            *data = p;
            *size = (size_t)sb.st_size;
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
