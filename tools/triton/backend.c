/*
 * tools/triton/backend.c - the backend's lifetime: TRITONBACKEND_Initialize
 * (the API version, the options), TRITONBACKEND_GetBackendAttribute (the
 * default instance kind) and TRITONBACKEND_Finalize.
 *
 * Backend options (--backend-config=mica,KEY=VALUE):
 *   module-dir   a folder of mica modules loaded after the default ones
 *                ($MICA_MODULE_DIR or the installed folder, then
 *                $MICA_MODULE_PATH)
 *   max-batch-size   the largest max_batch_size that auto-complete gives
 *                a model (default: the largest batch its profiles admit;
 *                Triton's default-max-batch-size, 4 for every backend, is
 *                not used)
 *   threads      CPU threads per layer of every instance (a model's
 *                `threads` parameter overrides it); default mica's
 *                (OMP_NUM_THREADS, else every CPU), waiting passively
 */
#include <config.h>

#include "backend.h"

#include <stdlib.h>

/* The options of --backend-config=mica,KEY=VALUE. */
static TRITONSERVER_Error *read_options(TRITONBACKEND_Backend *triton,
                                        mica__tb_backend_t *b)
{
    TRITONSERVER_Message *msg = NULL;
    TRITONSERVER_Error *err;
    const char *text;
    size_t len;
    mica__json_t *doc = NULL;
    const mica__json_t *cmdline, *v;
    char why[256];

    if ((err = TRITONBACKEND_BackendConfig(triton, &msg)))
        return err;
    if ((err = TRITONSERVER_MessageSerializeToJson(msg, &text, &len)))
        goto done;
    if (mica__json_parse(text, len, &doc, why, sizeof why) != 0) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                             "the backend configuration is not JSON: %s", why);
        goto done;
    }
    cmdline = mica__json_get(doc, "cmdline");
    /* Triton's own default-max-batch-size (4 unless given) reaches every
     * backend: the profiles say better what a model admits. */
    b->max_batch_cap = 0;
    if ((v = mica__json_get(cmdline, "max-batch-size")) &&
        (mica__json_int(v, &b->max_batch_cap) != 0 || b->max_batch_cap < 0)) {
        err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "backend "
                             "option max-batch-size is '%s', not a count "
                             "(--backend-config=mica,max-batch-size=N)",
                             v->text ? v->text : "");
        goto done;
    }
    if ((v = mica__json_get(cmdline, "threads")) &&
        (mica__json_int(v, &b->threads) != 0 || b->threads < 1 ||
         b->threads > 4096)) {
        err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "backend "
                             "option threads is '%s': it takes a count of "
                             "threads from 1 to 4096 (--backend-config="
                             "mica,threads=N)", v->text ? v->text : "");
        goto done;
    }
    if ((v = mica__json_get(cmdline, "module-dir")) && mica__json_string(v))
        err = mica__tb_strdup(mica__json_string(v), &b->module_dir);
done:
    mica__json_free(doc); /* msg is the server's */
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *triton)
{
    uint32_t major, minor;
    mica__tb_backend_t *b;
    TRITONSERVER_Error *err;

    if ((err = TRITONBACKEND_ApiVersion(&major, &minor)))
        return err;
    if (major != MICA_TRITON_API_MAJOR || minor < MICA_TRITON_API_MINOR)
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                              "the mica backend needs Triton's backend API "
                              "%d.%d or a later %d.x; this server has %u.%u",
                              MICA_TRITON_API_MAJOR, MICA_TRITON_API_MINOR,
                              MICA_TRITON_API_MAJOR, major, minor);
    if (!(b = calloc(1, sizeof *b)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    if ((err = read_options(triton, b)) ||
        (err = TRITONBACKEND_BackendSetState(triton, b))) {
        free(b->module_dir);
        free(b);
        return err;
    }
    mica__tb_log(TRITONSERVER_LOG_INFO, "mica backend: libmica %s, backend "
                 "API %u.%u, CUDA %s%s%s", mica_version(), major, minor,
                 mica__tb_have_cuda() ? "built in" : "not built in",
                 b->module_dir ? ", module-dir " : "",
                 b->module_dir ? b->module_dir : "");
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *triton)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_BackendState(triton, &state);
    mica__tb_backend_t *b = state;

    if (err)
        return err;
    if (b) {
        free(b->module_dir);
        free(b);
    }
    return NULL;
}

/*
 * Models whose configuration names no instance group get KIND_GPU
 * instances where this backend has CUDA and a GPU is usable, KIND_CPU
 * ones otherwise (the server's default would be KIND_GPU on any machine
 * with a GPU, even for a backend built without CUDA).  Instances may be
 * initialized in parallel: each has its own context, and the model's
 * shared engine bytes are built under a lock.
 */
TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *triton, TRITONBACKEND_BackendAttribute *attributes)
{
    TRITONSERVER_Error *err;
    int gpu = mica__tb_have_cuda() && mica_device_usable(MICA_DEVICE_CUDA);

    (void)triton;
    if ((err = TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
             attributes, gpu ? TRITONSERVER_INSTANCEGROUPKIND_GPU
                             : TRITONSERVER_INSTANCEGROUPKIND_CPU,
             0, NULL, 0)))
        return err;
    return TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
        attributes, true);
}
