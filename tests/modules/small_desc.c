/*
 * tests/modules/small_desc.c - a descriptor whose struct_size is smaller
 * than any ABI version's.
 */
#include <config.h>

#include "fake.h"

static const mica_layer_creator_t thing =
    FAKE_CREATOR("SmallThing", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t *const creators[] = {&thing};
static mica_module_desc_t desc = FAKE_DESC("small_desc", creators, NULL);

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)err;
    fake_host = host;
    desc.struct_size = 8;
    *out = &desc;
    return MICA_OK;
}
