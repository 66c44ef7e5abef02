/*
 * tests/modules/fake.h - helpers for the fake modules test_registry loads.
 * Each fake module is one small .c file built as a check-only libtool
 * module; the creators only need to exist, so create() refuses.
 */
#ifndef MICA_TEST_FAKE_H
#define MICA_TEST_FAKE_H

#include "mica/module.h"

static const mica_host_t *fake_host;

static mica_layer_t *fake_create(const mica_layer_creator_t *creator,
                                 const char *name, const mica_fields_t *fields,
                                 mica_error_t *err)
{
    (void)fields;
    fake_host->set_error(err, "%s: %s is a fake layer", name, creator->type);
    return NULL;
}

/* A creator literal: type, version, priority, ns, implementation, devices. */
#define FAKE_CREATOR(type_, version_, priority_, ns_, impl_, devices_) \
    { .struct_size = sizeof(mica_layer_creator_t), .type = (type_), \
      .version = (version_), .priority = (priority_), .ns = (ns_), \
      .implementation = (impl_), .devices = (devices_), \
      .role = MICA_ROLE_NONE, .create = fake_create }

/* A descriptor literal for `creators` (an array of pointers). */
#define FAKE_DESC(name, creators, fini) \
    { sizeof(mica_module_desc_t), MICA_ABI_VERSION, name, "1.2.3", "MIT", \
      "a fake module for test_registry", creators, \
      (int32_t)(sizeof(creators) / sizeof(creators[0])), 0, fini, \
      { NULL, NULL, NULL, NULL }, NULL, 0, 0 }

#endif
