/*
 * tests/modules/init_fail.c - an init that fails with a message.
 */
#include <config.h>

#include "mica/module.h"

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)out;
    host->set_error(err, "needs libwidget.so.3, which is not installed\n");
    return MICA_ERR_NOT_FOUND;
}
