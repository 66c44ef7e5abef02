/*
 * registry/host.h - the host service table handed to every module
 * (registry/host.c), for the parts of libmica above the registry that
 * call a module's ops with an error slot to fill.
 */
#ifndef MICA_REGISTRY_HOST_H
#define MICA_REGISTRY_HOST_H

#include "mica/mica.h"
#include "mica/module.h"

/* The table; its set_error formats a module call's error slot. */
const mica_host_t *mica__host(void);

/*
 * Check an instance that c's create or deserialize, or an instance's
 * clone, just returned (`how`: "create", "deserialize", "clone"): its
 * ops must be set, cover ABI version 1 and have every required callback
 * (registry/check.c).  When they do not, fails on ctx with
 * "PREFIX: module FILE: HOW returned an instance without enqueue (a
 * required callback)", destroys the instance where its ops allow it,
 * and sets *inst to NULL.
 */
mica_status_t mica__check_instance(mica_context_t *ctx,
                                   const mica_layer_creator_t *c,
                                   mica_layer_t **inst, const char *how,
                                   const char *prefix);

#endif
