/*
 * core/timing_cache.c - autotune's timing cache (TensorRT's ITimingCache,
 * trtexec --timingCacheFile): what autotune measured for a layer, keyed
 * by the layer's signature and the device, kept in memory for one
 * mica_engine_build and, with mica_build_config_t.timing_cache (mica
 * build --timing-cache FILE), in a file that later builds read and
 * extend.
 *
 * The key is 128 bits of hash (two FNV-1a 64 of different bases) of the
 * signature autotune.c writes: mica's version, the device's identity
 * (CUDA: the GPU's name, compute capability, runtime, driver and cuDNN
 * versions), the layer's type, its candidate implementations, its params
 * (weights by type and shape, not values) and its inputs and outputs at
 * the first profile.  An entry holds the winner: its implementation,
 * tactic and time, and the times of every candidate (what `mica inspect`
 * shows as the choice).
 *
 * The file is text, one entry a line after a header:
 *
 *     mica timing cache 1
 *     KEY(32 hex) TACTIC TIME_US IMPLEMENTATION TIMES...
 *
 * It is read as untrusted: a line that does not parse, is longer than
 * LINE_MAX_ or names an implementation with characters other than
 * letters, digits, '_', '-' and '.', is skipped (and counted in one
 * warning); a file that does not start with the header is ignored with
 * a warning and replaced when the build saves.  Saving writes .FILE.XXXXXX
 * and renames it over FILE, so that a reader never sees half a file.
 */
#include <config.h>

#include "build.h"
#include "files.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "mica timing cache 1"
#define LINE_MAX_ 4096
#define MAX_ENTRIES 1000000
#define MAX_FILE_BYTES ((long)256 << 20)

typedef struct tentry {
    uint64_t key[2];
    int32_t tactic;
    double us;
    char *impl;
    char *why;
} tentry_t;

struct mica__tcache {
    char *path;            /* NULL: in memory only */
    tentry_t *v;
    int32_t n, cap;
    int32_t changed;
};

void mica__tkey_init(mica__tkey_t *k)
{
    k->h[0] = 1469598103934665603ull;
    k->h[1] = 0x9e3779b97f4a7c15ull;
}

void mica__tkey_add(mica__tkey_t *k, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t i;
    for (i = 0; i < n; i++) {
        k->h[0] = (k->h[0] ^ c[i]) * 1099511628211ull;
        k->h[1] = (k->h[1] ^ c[i]) * 0x100000001b3ull;
        k->h[1] ^= k->h[1] >> 29;
    }
}

void mica__tkey_str(mica__tkey_t *k, const char *s)
{
    mica__tkey_add(k, s ? s : "", strlen(s ? s : "") + 1);
}

static int impl_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
              *s == '.'))
            return 0;
    return 1;
}

static void entry_free(tentry_t *t)
{
    free(t->impl);
    free(t->why);
}

void mica__tcache_free(mica__tcache_t *c)
{
    int32_t i;
    if (!c)
        return;
    for (i = 0; i < c->n; i++)
        entry_free(&c->v[i]);
    free(c->v);
    free(c->path);
    free(c);
}

static tentry_t *find(const mica__tcache_t *c, const uint64_t key[2])
{
    int32_t i;
    for (i = 0; i < c->n; i++)
        if (c->v[i].key[0] == key[0] && c->v[i].key[1] == key[1])
            return &c->v[i];
    return NULL;
}

/* Add or replace; 0, or -1 when memory runs out (the cache unchanged). */
static int put(mica__tcache_t *c, const uint64_t key[2], const char *impl,
               int32_t tactic, double us, const char *why)
{
    tentry_t *t = find(c, key), nt;

    memset(&nt, 0, sizeof nt);
    nt.key[0] = key[0];
    nt.key[1] = key[1];
    nt.tactic = tactic;
    nt.us = us;
    nt.impl = mica__strdup(impl);
    nt.why = mica__strdup(why ? why : "");
    if (!nt.impl || !nt.why) {
        entry_free(&nt);
        return -1;
    }
    if (!t) {
        if (c->n >= MAX_ENTRIES) {
            entry_free(&nt);
            return 0; /* full: not kept, timed again next time */
        }
        if (c->n == c->cap) {
            int32_t cap = c->cap ? c->cap * 2 : 64;
            tentry_t *grown = realloc(c->v, sizeof *grown * (size_t)cap);
            if (!grown) {
                entry_free(&nt);
                return -1;
            }
            c->v = grown;
            c->cap = cap;
        }
        t = &c->v[c->n++];
    } else {
        entry_free(t);
    }
    *t = nt;
    return 0;
}

/* One line of the file into the cache; 0, 1 skipped, -1 no memory. */
static int parse_line(mica__tcache_t *c, char *line)
{
    char *p = line, *end, *impl, *why;
    uint64_t key[2];
    long tactic;
    double us;
    int i;

    for (i = 0; i < 2; i++) {
        char hex[17];
        memcpy(hex, p, 16);
        hex[16] = '\0';
        if (strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
            return 1;
        key[i] = strtoull(hex, NULL, 16);
        p += 16;
    }
    if (*p != ' ')
        return 1;
    errno = 0;
    tactic = strtol(p + 1, &end, 10);
    if (errno || end == p + 1 || *end != ' ' || tactic < 0 ||
        tactic > INT32_MAX)
        return 1;
    p = end + 1;
    us = strtod(p, &end);
    if (end == p || *end != ' ' || !(us >= 0) || us > 1e12)
        return 1;
    impl = end + 1;
    why = strchr(impl, ' ');
    if (why)
        *why++ = '\0';
    if (!impl_ok(impl))
        return 1;
    return put(c, key, impl, (int32_t)tactic, us, why ? why : "");
}

mica_status_t mica__tcache_open(mica_context_t *ctx, const char *path,
                                mica__tcache_t **out)
{
    mica__tcache_t *c = calloc(1, sizeof *c);
    char *line = NULL;
    int32_t skipped = 0;
    long size;
    FILE *f;
    mica_status_t st = MICA_OK;

    *out = NULL;
    if (!c || (path && !(c->path = mica__strdup(path)))) {
        mica__tcache_free(c);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if (!path || !(f = fopen(path, "rb"))) {
        /* No file yet: made when the build saves. */
        *out = c;
        return MICA_OK;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || size > MAX_FILE_BYTES) {
        fclose(f);
        mica__log(ctx, MICA_LOG_WARNING, "timing cache '%s': not read (not "
                  "a regular file, or larger than %ld bytes); it is "
                  "replaced when this build saves", path, MAX_FILE_BYTES);
        *out = c;
        return MICA_OK;
    }
    if (!(line = malloc(LINE_MAX_ + 2))) {
        fclose(f);
        mica__tcache_free(c);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if (!fgets(line, LINE_MAX_ + 2, f) ||
        strncmp(line, HEADER "\n", sizeof HEADER) != 0) {
        mica__log(ctx, MICA_LOG_WARNING, "timing cache '%s': not a mica "
                  "timing cache (its first line is not '%s'): ignored, and "
                  "replaced when this build saves", path, HEADER);
        goto done;
    }
    while (fgets(line, LINE_MAX_ + 2, f)) {
        size_t len = strlen(line);
        int r;
        if (len == 0 || line[len - 1] != '\n') {
            int ch;
            /* Longer than a line may be: skip the rest of it. */
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            skipped++;
            continue;
        }
        line[len - 1] = '\0';
        if ((r = parse_line(c, line)) < 0) {
            st = mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
            goto done;
        }
        skipped += r;
    }
    if (skipped)
        mica__log(ctx, MICA_LOG_WARNING, "timing cache '%s': %d lines that "
                  "are not entries were skipped", path, (int)skipped);
    mica__log(ctx, MICA_LOG_INFO, "timing cache '%s': %d entries", path,
              (int)c->n);
done:
    free(line);
    fclose(f);
    if (st != MICA_OK) {
        mica__tcache_free(c);
        return st;
    }
    *out = c;
    return MICA_OK;
}

int mica__tcache_find(const mica__tcache_t *c, const mica__tkey_t *k,
                      const char **impl, int32_t *tactic, double *us,
                      const char **why)
{
    const tentry_t *t = c ? find(c, k->h) : NULL;
    if (!t)
        return 0;
    *impl = t->impl;
    *tactic = t->tactic;
    *us = t->us;
    *why = t->why;
    return 1;
}

mica_status_t mica__tcache_put(mica_context_t *ctx, mica__tcache_t *c,
                               const mica__tkey_t *k, const char *impl,
                               int32_t tactic, double us, const char *why)
{
    char clean[LINE_MAX_ / 2];
    size_t i;

    if (!c || !impl_ok(impl) || tactic < 0)
        return MICA_OK; /* not kept: timed again next time */
    /* The times as one line of text. */
    snprintf(clean, sizeof clean, "%s", why ? why : "");
    for (i = 0; clean[i]; i++)
        if (clean[i] == '\n' || clean[i] == '\r')
            clean[i] = ' ';
    if (put(c, k->h, impl, tactic, us, clean) != 0)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    c->changed = 1;
    return MICA_OK;
}

mica_status_t mica__tcache_save(mica_context_t *ctx, mica__tcache_t *c)
{
    char *tmp;
    FILE *f;
    int32_t i;
    int bad;

    if (!c || !c->path || !c->changed)
        return MICA_OK;
    if (!(f = mica__fcreate_tmp(c->path, &tmp)))
        return mica__fail(ctx, errno == ENOMEM ? MICA_ERR_NOMEM : MICA_ERR_IO,
                          "timing cache: cannot write '%s': %s",
                          c->path, strerror(errno));
    bad = fprintf(f, HEADER "\n") < 0;
    for (i = 0; i < c->n && !bad; i++)
        bad = fprintf(f, "%016" PRIx64 "%016" PRIx64 " %d %.3f %s %s\n",
                      c->v[i].key[0], c->v[i].key[1], (int)c->v[i].tactic,
                      c->v[i].us, c->v[i].impl, c->v[i].why) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, c->path) != 0) {
        mica_status_t st = mica__fail(ctx, MICA_ERR_IO, "timing cache: "
                                      "cannot write '%s': %s", c->path,
                                      strerror(errno));
        remove(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    c->changed = 0;
    mica__log(ctx, MICA_LOG_INFO, "timing cache '%s': %d entries saved",
              c->path, (int)c->n);
    return MICA_OK;
}
