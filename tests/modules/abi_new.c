/*
 * tests/modules/abi_new.c - answers with an ABI version newer than the host's.
 */
#include <config.h>

#include "fake.h"

static const mica_layer_creator_t thing =
    FAKE_CREATOR("AbinewThing", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t *const creators[] = {&thing};
static mica_module_desc_t desc = FAKE_DESC("abi_new", creators, NULL);

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)err;
    fake_host = host;
    desc.abi_version = MICA_ABI_VERSION + 1;
    *out = &desc;
    return MICA_OK;
}
