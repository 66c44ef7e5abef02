/*
 * core/format/load.c - reading engine files: the header and the checksum,
 * then the payload by its format (format 3 restored, restore.c; formats 1
 * and 2 built again, legacy.c).
 *
 * Nothing here copies a layer's state: layers get pointers into the
 * bytes.  mica_engine_load maps the file (file.c) (or, where it cannot,
 * reads it into one buffer) and gives the mapping to the engine, which
 * releases it after its layers; so do the caller's bytes given to
 * mica_engine_deserialize_borrow.  In both cases layers are told
 * MICA_STATE_PERSISTENT and may use their weights in place; after
 * mica_engine_deserialize they copy what they keep.
 */
#include <config.h>

#include "format.h"
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mica_status_t mica__load_corrupt(mica__load_t *l, const char *where)
{
    return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is corrupt: bad %s",
                      l->what, where);
}

/* Header checks; on success l->r covers the payload. */
static mica_status_t check_header(mica__load_t *l, const unsigned char *data,
                                  size_t size)
{
    uint32_t format, abi;
    uint64_t payload, sum;

    if (size < 8 || memcmp(data, ENGINE_MAGIC, 8) != 0)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is not a mica engine "
                          "(no MICAENG header)", l->what);
    if (size < HEADER_BYTES)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is truncated: %zu "
                          "bytes, shorter than its %d-byte header", l->what,
                          size, HEADER_BYTES);
    memcpy(&format, data + 8, 4);
    memcpy(&abi, data + 12, 4);
    memcpy(&payload, data + 16, 8);
    memcpy(&sum, data + 24, 8);
    if (format > ENGINE_FORMAT || format < ENGINE_FORMAT_MIN)
        return mica__fail(l->ctx, MICA_ERR_UNSUPPORTED, "%s has format "
                          "version %u; this mica reads versions %d to %d",
                          l->what, (unsigned)format, ENGINE_FORMAT_MIN,
                          ENGINE_FORMAT);
    if (abi > MICA_ABI_VERSION || abi < MICA_ABI_VERSION_MIN)
        return mica__fail(l->ctx, MICA_ERR_ABI, "%s was built with ABI "
                          "version %u; this mica supports %d..%d", l->what,
                          (unsigned)abi, MICA_ABI_VERSION_MIN,
                          MICA_ABI_VERSION);
    if (payload != size - HEADER_BYTES)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is truncated or has "
                          "trailing bytes: %llu bytes of contents, the header "
                          "says %llu", l->what,
                          (unsigned long long)(size - HEADER_BYTES),
                          (unsigned long long)payload);
    if (mica__checksum(data + HEADER_BYTES, size - HEADER_BYTES) != sum)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is corrupt: its "
                          "checksum does not match its contents", l->what);
    l->r.p = data + HEADER_BYTES;
    l->r.len = size - HEADER_BYTES;
    l->r.format = format;
    return MICA_OK;
}

/*
 * The engine of `size` bytes at `data`.  `keep` says what the engine
 * takes over on success: 0 nothing (the caller's bytes:
 * mica_engine_deserialize, whose layers must copy what they keep, or
 * mica_engine_deserialize_borrow, which tells them they need not), 1 a
 * malloc'd buffer, 2 a mapping.  With keep, or `persistent`, the layers
 * are told MICA_STATE_PERSISTENT.  On failure the bytes stay the
 * caller's.
 */
static mica_status_t load_bytes(mica_context_t *ctx, const char *what,
                                const void *data, size_t size, int keep,
                                int persistent, mica_engine_t **out)
{
    mica__load_t l;
    mica_status_t st;

    *out = NULL;
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.what = what;
    l.state_flags = keep || persistent ? MICA_STATE_PERSISTENT : 0;
    if ((st = check_header(&l, data, size)) != MICA_OK)
        return st;
    st = l.r.format >= 3 ? mica__load_restore(&l, out)
                         : mica__load_legacy(&l, out);
    if (st == MICA_OK && keep) {
        (*out)->bytes = (void *)data;
        (*out)->bytes_size = size;
        (*out)->bytes_unmap = keep == 2;
    }
    return st;
}

mica_status_t mica_engine_deserialize(mica_context_t *ctx, const void *data,
                                      size_t size, mica_engine_t **out)
{
    return load_bytes(ctx, "engine", data, size, 0, 0, out);
}

mica_status_t mica_engine_deserialize_borrow(mica_context_t *ctx,
                                             const void *data, size_t size,
                                             mica_engine_t **out)
{
    return load_bytes(ctx, "engine", data, size, 0, 1, out);
}

mica_status_t mica_engine_load(mica_context_t *ctx, const char *path,
                               mica_engine_t **out)
{
    unsigned char *data = NULL;
    size_t size = 0;
    char *what = NULL;
    int unmap = 0;
    mica_status_t st;

    *out = NULL;
    if ((st = mica__engine_file_map(ctx, path, &data, &size, &unmap)) != MICA_OK)
        return st;
    what = mica__asprintf("engine file '%s'", path);
    st = what ? load_bytes(ctx, what, data, size, unmap ? 2 : 1, 1, out)
              : mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    if (st != MICA_OK)
        mica__bytes_release(data, size, unmap);
    free(what);
    return st;
}

int32_t mica_engine_file_probe(const char *path)
{
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    int32_t yes;

    if (!f)
        return 0;
    yes = fread(head, 1, 8, f) == 8 && memcmp(head, ENGINE_MAGIC, 8) == 0;
    fclose(f);
    return yes;
}
