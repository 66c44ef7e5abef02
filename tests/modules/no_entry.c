/*
 * tests/modules/no_entry.c - a shared object without mica_module_init.
 */
#include <config.h>

#include "mica/types.h"

MICA_EXPORT int not_a_mica_module(void);

int not_a_mica_module(void)
{
    return 42;
}
