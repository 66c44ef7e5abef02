/*
 * modules/assertion/assertion.c - the Assertion layer (TensorRT's
 * IAssertionLayer): fails when any element of its condition is false.
 *
 * One input, a bool shape tensor of rank 0 or 1 (input kind
 * MICA_INPUT_SHAPE), and no outputs.  Param `message` (string, optional:
 * absent, "assertion failed") is what the failure says.
 *
 * Two checks, as TensorRT does them:
 *   - at build time, where the condition's values are provably false
 *     (constant expressions): the core refuses the network, by the
 *     creator's role MICA_ROLE_ASSERTION, reading the `message` field;
 *   - at run time, in phase 1 on the host: the CPU enqueue below sees the
 *     computed values and fails with MICA_ERR_RUNTIME, the message and
 *     the first false element.
 *
 * Only a CPU ("reference") implementation exists, on purpose: the layer
 * reads a shape tensor and writes nothing, so the core runs it on the host
 * in phase 1 whatever the engine's device; a CUDA creator would have no
 * work to do.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"

static const mica_field_schema_t assertion_fields[] = {
    {"message", MICA_FIELD_STRING, 1, 0, 0, NULL, NULL,
     "what the failure says (default: \"assertion failed\")"},
};

/* ---- types and shapes --------------------------------------------------- */

static mica_status_t assertion_output_dtypes(const mica_layer_t *layer,
                                             const mica_dtype_t *in,
                                             int32_t nb_in, mica_dtype_t *out,
                                             int32_t nb_out,
                                             mica_error_t *err)
{
    (void)layer;
    (void)out;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input (the condition), got %d",
                             (int)nb_in);
    if (nb_out != 0)
        return MICA_KIT_FAIL(err, "has no outputs, got %d", (int)nb_out);
    if (in[0] != MICA_BOOL)
        return MICA_KIT_FAIL(err,
                             "input 0 (the condition) has type %s but must "
                             "be bool",
                             mica_kit_host->dtype_name(in[0]));
    return MICA_OK;
}

static mica_status_t check_rank(const mica_dims_t *d, mica_error_t *err)
{
    if (d->nb_dims > 1)
        return MICA_KIT_FAIL(err,
                             "the condition has rank %d but must be 0-D or "
                             "1-D (a shape tensor)",
                             (int)d->nb_dims);
    return MICA_OK;
}

static mica_status_t assertion_configure(mica_layer_t *layer,
                                         const mica_dyn_desc_t *in,
                                         int32_t nb_in,
                                         const mica_dyn_desc_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    (void)layer; (void)nb_in; (void)out; (void)nb_out;
    return check_rank(&in[0].desc.dims, err);
}

static int32_t assertion_input_kind(const mica_layer_t *layer, int32_t index,
                                    int32_t nb_inputs)
{
    (void)layer;
    (void)index;
    (void)nb_inputs;
    return MICA_INPUT_SHAPE;
}

/* ---- the host check ----------------------------------------------------- */

static mica_status_t assertion_enqueue_cpu(mica_layer_t *layer,
                                           const mica_tensor_desc_t *in,
                                           int32_t nb_in,
                                           const mica_tensor_desc_t *out,
                                           int32_t nb_out,
                                           const void *const *inputs,
                                           void *const *outputs,
                                           void *workspace, void *stream,
                                           mica_error_t *err)
{
    const mica_kit_layer_t *l = (const mica_kit_layer_t *)layer;
    const char *msg = mica_kit_string(mica_kit_fields_view(l->fields),
                                      "message");
    const uint8_t *cond = inputs[0];
    int64_t n, i;
    mica_status_t st;
    (void)nb_in; (void)out; (void)nb_out; (void)outputs; (void)workspace;
    (void)stream;

    if ((st = check_rank(&in[0].dims, err)) != MICA_OK)
        return st;
    n = mica_dims_volume(&in[0].dims);
    for (i = 0; i < n; i++) {
        if (cond[i])
            continue;
        if (in[0].dims.nb_dims == 0)
            mica_kit_host->set_error(err, "%s (the condition is false)",
                                     msg ? msg : "assertion failed");
        else
            mica_kit_host->set_error(err, "%s (element %lld of the "
                                     "condition is false)",
                                     msg ? msg : "assertion failed",
                                     (long long)i);
        return MICA_ERR_RUNTIME;
    }
    return MICA_OK;
}

static const mica_layer_ops_t assertion_ops_cpu = MICA_KIT_OPS(
    assertion_enqueue_cpu, .nb_outputs = mica_kit_no_outputs,
    .output_dtypes = assertion_output_dtypes,
    .output_dims = mica_kit_no_output_dims,
    .supports_format = mica_kit_bool_input,
    .configure = assertion_configure, .input_kind = assertion_input_kind);

/* The CPU alone: it reads a shape tensor, on the host. */
static const mica_layer_creator_t assertion_reference = MICA_KIT_CREATOR(
    "Assertion", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_ASSERTION,
    assertion_fields, 1, mica_kit_layer_create, &assertion_ops_cpu);

static const mica_layer_creator_t *const assertion_creators[] = {
    &assertion_reference};

MICA_KIT_ENTRY("assertion", PACKAGE_VERSION, "MIT",
               "Assertion: fail when a bool shape tensor has a false element",
               assertion_creators)
