/*
 * core/base/files.c - files a model names, opened as untrusted (inside
 * its folder after following links, regular files only), and output
 * files created under unpredictable names without following links.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

/* Whether real path `p` is folder `dir` or lies under it. */
static int under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return 1;
    return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == '\0');
}

/* Whether descriptor fd is the file at real path rp, as /proc names what
 * was opened: a folder of rp swapped for a link between realpath and
 * open would have opened a file elsewhere.  1 where /proc cannot say. */
static int opened_at(int fd, const char *rp)
{
    size_t n = strlen(rp);
    char proc[32], *got = malloc(n + 2);
    ssize_t k;
    int same;

    if (!got)
        return 1;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    k = readlink(proc, got, n + 2);
    same = k < 0 || ((size_t)k == n && !memcmp(got, rp, n));
    free(got);
    return same;
}

int mica__open_inside(const mica_context_t *ctx, const char *dir,
                      const char *name, char **real, mica_status_t *st,
                      char *err, size_t errlen)
{
    char *path = NULL, *rp = NULL, *rdir = NULL;
    struct stat sb;
    int fd = -1, e, i, inside = 0;

    if (real)
        *real = NULL;
    if (name[0] == '/' || !dir[0])
        path = strdup(name);
    else if ((path = malloc(strlen(dir) + strlen(name) + 2)))
        sprintf(path, "%s/%s", dir, name);
    rdir = realpath(dir[0] ? dir : ".", NULL);
    if (!path || !rdir) {
        *st = path ? MICA_ERR_IO : MICA_ERR_NOMEM;
        snprintf(err, errlen, path ? "cannot resolve the model's folder "
                 "'%s': %s" : "out of memory", dir[0] ? dir : ".",
                 strerror(errno));
        goto out;
    }
    if (!(rp = realpath(path, NULL))) {
        e = errno;
        *st = e == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
        goto out;
    }
    inside = under(rp, rdir);
    for (i = 0; ctx && !inside && i < ctx->nb_folders; i++)
        inside = under(rp, ctx->folders[i]);
    if (!inside) {
        *st = MICA_ERR_INVALID;
        snprintf(err, errlen, "'%s' resolves to '%s', outside the model's "
                 "folder '%s' (mica --allow-folder or "
                 "mica_context_allow_folder allows another)", name, rp, rdir);
        goto out;
    }
    /* The real path has no link left: O_NOFOLLOW refuses one put there
     * since; O_NONBLOCK keeps a FIFO from blocking the open. */
    fd = open(rp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        e = errno;
        *st = e == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
        goto out;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        *st = MICA_ERR_INVALID;
        snprintf(err, errlen, "cannot read '%s': %s", path,
                 S_ISDIR(sb.st_mode) ? "is a directory"
                 : S_ISFIFO(sb.st_mode) ? "not a regular file (a FIFO)"
                 : "not a regular file");
        close(fd);
        fd = -1;
        goto out;
    }
    if (!opened_at(fd, rp)) {
        *st = MICA_ERR_INVALID;
        snprintf(err, errlen, "'%s' moved while it was opened (a folder "
                 "on its path was replaced): refused", path);
        close(fd);
        fd = -1;
        goto out;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (real) {
        *real = rp;
        rp = NULL;
    }
    *st = MICA_OK;
out:
    free(path);
    free(rp);
    free(rdir);
    return fd;
}

/* 6 characters of [A-Za-z0-9] from a counter, the clock and the pid,
 * mixed (splitmix64); O_EXCL makes a guessed name harmless. */
static void random_suffix(char *s)
{
    static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
                              "tuvwxyz0123456789";
    static unsigned long long counter;
    struct timespec ts;
    unsigned long long x;
    int i;

    clock_gettime(CLOCK_REALTIME, &ts);
    x = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull
        ^ (unsigned long long)ts.tv_nsec ^ (unsigned long long)ts.tv_sec << 30
        ^ (unsigned long long)getpid() << 40;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    for (i = 0; i < 6; i++, x /= 62)
        s[i] = set[x % 62];
}

int mica__create_tmp(const char *path, char **tmp)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    char *t;
    int fd = -1, tries;

    *tmp = NULL;
    t = malloc(strlen(path) + 10);
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(t, path, dlen);
    for (tries = 0; tries < 100; tries++) {
        size_t n = dlen + (size_t)sprintf(t + dlen, ".%s.", path + dlen);
        random_suffix(t + n);
        t[n + 6] = '\0';
        fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0666);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        free(t);
        errno = e;
        return -1;
    }
    *tmp = t;
    return fd;
}

FILE *mica__fcreate_tmp(const char *path, char **tmp)
{
    int fd = mica__create_tmp(path, tmp);
    FILE *f;
    if (fd < 0)
        return NULL;
    if (!(f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return f;
}
