/*
 * tests/hostile/entry_data.c - a module whose entry symbol
 * mica_module_init is data, not a function: calling it would execute
 * these bytes.  The host must refuse it without calling it.
 */
#include <config.h>

__attribute__((visibility("default")))
const unsigned char mica_module_init[64] = {0xff, 0xff, 0xff, 0xff};
