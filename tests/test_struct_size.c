/*
 * tests/test_struct_size.c - output structs honour the caller's
 * struct_size: an application built against an older header (its
 * struct_size smaller: the first layout) gets nothing written past its
 * struct; 0 reads as the first layout; a newer one (a larger struct)
 * gets the library's size back and its own members left alone.  For
 * mica_registry_get/find, mica_engine_tensor, mica_engine_layer and
 * mica_engine_construct.
 */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PAD 64
#define CANARY 0xa5

static mica_context_t *ctx;

/* A struct of the library's kind followed by PAD canary bytes. */
typedef union room {
    uint32_t struct_size;
    unsigned char bytes[512 + PAD];
    int64_t align_;
} room_t;

/* Fill r with the canary, struct_size `size`. */
static void prepare(room_t *r, uint32_t size)
{
    memset(r->bytes, CANARY, sizeof r->bytes);
    r->struct_size = size;
}

/* Whether bytes [from, sizeof) of r are all the canary. */
static int untouched(const room_t *r, size_t from)
{
    size_t i;
    for (i = from; i < sizeof r->bytes; i++)
        if (r->bytes[i] != CANARY)
            return 0;
    return 1;
}

typedef mica_status_t (*getter_t)(room_t *r);

static mica_engine_t *engine;

static mica_status_t get_creator(room_t *r)
{
    return mica_registry_get(ctx, 0, (mica_creator_info_t *)r->bytes);
}

static mica_status_t find_creator(room_t *r)
{
    return mica_registry_find(ctx, NULL, "Identity", 0, NULL, 0,
                              (mica_creator_info_t *)r->bytes);
}

static mica_status_t get_tensor(room_t *r)
{
    return mica_engine_tensor(engine, 0, (mica_tensor_info_t *)r->bytes);
}

static mica_status_t get_layer(room_t *r)
{
    return mica_engine_layer(engine, 0, (mica_layer_info_t *)r->bytes);
}

static mica_status_t get_pass(room_t *r)
{
    return mica_engine_pass(engine, 0, (mica_pass_info_t *)r->bytes);
}

static mica_status_t get_construct(room_t *r)
{
    return mica_engine_construct(engine, 0,
                                 (mica_construct_info_t *)r->bytes);
}

/* The four cases of one getter: its first layout `oldest`, 0, a newer
 * struct, its own size. */
static void check(const char *what, getter_t get, size_t oldest,
                  size_t full)
{
    room_t r;

    prepare(&r, (uint32_t)oldest);
    ok(get(&r) == MICA_OK && r.struct_size == oldest &&
       untouched(&r, oldest), "%s: an older caller's %zu bytes: nothing "
       "written past them", what, oldest);
    prepare(&r, 0);
    ok(get(&r) == MICA_OK && r.struct_size == oldest &&
       untouched(&r, oldest), "%s: struct_size 0 reads as the first layout",
       what);
    prepare(&r, (uint32_t)(full + PAD / 2));
    ok(get(&r) == MICA_OK && r.struct_size == full && untouched(&r, full),
       "%s: a newer caller's larger struct: %zu bytes written, its own "
       "members left alone", what, full);
    prepare(&r, (uint32_t)full);
    ok(get(&r) == MICA_OK && r.struct_size == full && untouched(&r, full),
       "%s: this header's size: all of it", what);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    char path[4096];
    mica_manifest_t *m = NULL;
    mica_build_config_t cfg;

    if (!top)
        skip_all("MICA_TOP_SRCDIR not set");
    plan(6 * 4);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/manifests/control/for_loop.yaml",
             top);
    if (mica_manifest_load(ctx, path, &m) != MICA_OK)
        bail("%s: %s", path, mica_context_error(ctx));
    cfg = *mica_manifest_config(m);
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &engine) !=
        MICA_OK)
        bail("build: %s", mica_context_error(ctx));
    check("mica_registry_get", get_creator,
          offsetof(mica_creator_info_t, module_license),
          sizeof(mica_creator_info_t));
    check("mica_registry_find", find_creator,
          offsetof(mica_creator_info_t, module_license),
          sizeof(mica_creator_info_t));
    check("mica_engine_tensor", get_tensor,
          offsetof(mica_tensor_info_t, is_shape_output),
          sizeof(mica_tensor_info_t));
    check("mica_engine_layer", get_layer,
          offsetof(mica_layer_info_t, choice), sizeof(mica_layer_info_t));
    check("mica_engine_construct", get_construct,
          sizeof(mica_construct_info_t), sizeof(mica_construct_info_t));
    check("mica_engine_pass", get_pass, sizeof(mica_pass_info_t),
          sizeof(mica_pass_info_t));
    mica_engine_destroy(engine);
    mica_manifest_destroy(m);
    return 0;
}
