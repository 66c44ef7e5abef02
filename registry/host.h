/*
 * registry/host.h - the host service table handed to every module
 * (registry/host.c), for the parts of libmica above the registry that
 * call a module's ops with an error slot to fill.
 */
#ifndef MICA_REGISTRY_HOST_H
#define MICA_REGISTRY_HOST_H

#include "mica/module.h"

/* The table; its set_error formats a module call's error slot. */
const mica_host_t *mica__host(void);

#endif
