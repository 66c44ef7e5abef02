/*
 * tests/modules/good.c - a well-formed module: Widget v1 in four
 * implementations (two CPU ones of equal priority), Widget v2, and a
 * namespaced Gadget with a field schema.  Its fini appends a line to the
 * file named by $MICA_TEST_FINI_FILE, so the test sees it was called.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

static const char *const modes[] = {"fast", "exact", NULL};
static const int64_t mode_default[] = {1};
static const mica_field_schema_t gadget_fields[] = {
    {"mode", MICA_FIELD_ENUM, 1, 0, 1, mode_default, modes, "how"},
    {"sizes", MICA_FIELD_INT, MICA_COUNT_ANY, 1, 0, NULL, NULL, NULL},
};

static const mica_layer_creator_t w1_ref =
    FAKE_CREATOR("Widget", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t w1_simd =
    FAKE_CREATOR("Widget", 1, 5, "", "simd", MICA_DEVICE_CPU);
static const mica_layer_creator_t w1_avx =
    FAKE_CREATOR("Widget", 1, 5, NULL, "avx", MICA_DEVICE_CPU);
static const mica_layer_creator_t w1_cuda =
    FAKE_CREATOR("Widget", 1, 10, "", "cuda", MICA_DEVICE_CUDA);
static const mica_layer_creator_t w2_ref =
    FAKE_CREATOR("Widget", 2, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t gadget = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "Gadget",
    .version = 1, .ns = "acme", .implementation = "reference",
    .devices = MICA_DEVICE_CPU | MICA_DEVICE_CUDA, .role = MICA_ROLE_NONE,
    .fields = gadget_fields, .nb_fields = 2, .create = fake_create};

/* Out of key order on purpose: the registry sorts. */
static const mica_layer_creator_t *const creators[] = {
    &gadget, &w2_ref, &w1_ref, &w1_simd, &w1_cuda, &w1_avx,
};

static void good_fini(void)
{
    const char *file = getenv("MICA_TEST_FINI_FILE");
    FILE *f = file ? fopen(file, "a") : NULL;
    if (f) {
        fputs("good fini\n", f);
        fclose(f);
    }
}

static const mica_module_desc_t desc = FAKE_DESC("good", creators, good_fini);

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    /* the module's side of the negotiation, and the host's services */
    if (host->abi_version < MICA_ABI_VERSION_MIN ||
        !MICA_HOST_HAS(host, status_name)) {
        host->set_error(err, "host ABI version %u is too old",
                        (unsigned)host->abi_version);
        return MICA_ERR_ABI;
    }
    if (strcmp(host->dtype_name(MICA_FLOAT16), "float16") != 0 ||
        strcmp(host->status_name(MICA_ERR_ABI), "ABI version mismatch") != 0) {
        host->set_error(err, "the host's name services are wrong");
        return MICA_ERR_INTERNAL;
    }
    host->log(MICA_LOG_DEBUG, "good", "initialized (host ABI %u)",
              (unsigned)host->abi_version);
    fake_host = host;
    *out = &desc;
    return MICA_OK;
}
