/*
 * tests/kit_host.h - a host table of its own for the tests that use the
 * module kit without libmica (tests/test_kit.c, tests/test_kit_nogpu.c),
 * as a third-party host would offer one.
 *
 * The error slot is opaque to modules; here it is a line of text.
 * Dimension expressions are kit_expr_t: a value, constant or not.
 */
#ifndef MICA_TEST_KIT_HOST_H
#define MICA_TEST_KIT_HOST_H

#include "mica/module.h"

struct mica_error {
    char msg[512];
};

struct mica_expr {
    int constant;
    int64_t value;
};

/* The table: set_error writes the slot, log prints "# " lines, dtype and
 * status names are mica's. */
const mica_host_t *kit_test_host(void);

#endif
