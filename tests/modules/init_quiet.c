/*
 * tests/modules/init_quiet.c - an init that fails without a message: the
 * host names the status instead.
 */
#include <config.h>

#include "mica/module.h"

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)host;
    (void)out;
    (void)err;
    return MICA_ERR_UNSUPPORTED;
}
