/*
 * tests/hostile/overclaim.c - descriptors and schemas that claim more
 * than they hold, placed so that what lies past them cannot be read: the
 * array of creators (HOSTILE_KIND 1) or a creator's fields (2) ends where
 * an inaccessible page begins.  Reading one entry too many faulted the
 * host; it must refuse the module or the creator instead, in one line.
 */
#include <config.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mica/module.h"

static const mica_host_t *host_;

static mica_layer_t *refuse(const mica_layer_creator_t *c, const char *name,
                            const mica_fields_t *fields, mica_error_t *err)
{
    (void)fields;
    host_->set_error(err, "%s: %s is a test layer", name, c->type);
    return NULL;
}

static const mica_layer_creator_t one = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "OverClaimed",
    .version = 1, .implementation = "reference",
    .devices = MICA_DEVICE_CPU, .create = refuse};

static mica_module_desc_t desc = {
    .struct_size = sizeof(mica_module_desc_t),
    .abi_version = MICA_ABI_VERSION, .name = "overclaim", .version = "1"};

/* The last `bytes` bytes of a page followed by an inaccessible one. */
static void *at_page_end(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + page, (size_t)page, PROT_NONE))
        return NULL;
    return p + page - bytes;
}

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    host_ = host;
#if HOSTILE_KIND == 1
    /* one creator, two claimed */
    const mica_layer_creator_t **list = at_page_end(sizeof *list);
    if (!list)
        return MICA_ERR_NOMEM;
    list[0] = &one;
    desc.creators = (const mica_layer_creator_t *const *)list;
    desc.nb_creators = 2;
#else
    /* one creator whose schema has one field and claims two */
    static const mica_layer_creator_t *list[1];
    mica_layer_creator_t *c = at_page_end(sizeof *c + 64);
    mica_field_schema_t *f = at_page_end(sizeof *f);
    if (!c || !f)
        return MICA_ERR_NOMEM;
    memset(f, 0, sizeof *f);
    f->name = "axis";
    f->type = MICA_FIELD_INT;
    f->count = 1;
    *c = one;
    c->type = "OverFields";
    c->fields = f;
    c->nb_fields = 2;
    list[0] = c;
    desc.creators = list;
    desc.nb_creators = 1;
#endif
    (void)err;
    *out = &desc;
    return MICA_OK;
}
