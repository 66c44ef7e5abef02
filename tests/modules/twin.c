/*
 * tests/modules/twin.c - claims Widget v1 'reference', which good.c
 * registers too, and a Sprocket that nobody else has: the duplicate is
 * refused, the Sprocket registers.
 */
#include <config.h>

#include "fake.h"

static const mica_layer_creator_t dup =
    FAKE_CREATOR("Widget", 1, 100, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t sprocket =
    FAKE_CREATOR("Sprocket", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t *const creators[] = {&dup, &sprocket};
static const mica_module_desc_t desc = FAKE_DESC("twin", creators, NULL);

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)err;
    fake_host = host;
    *out = &desc;
    return MICA_OK;
}
