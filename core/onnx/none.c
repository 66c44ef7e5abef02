/*
 * core/onnx/none.c - the ONNX functions of mica.h in a build without the
 * importer (configure --without-onnx, or protobuf-c or onnx.proto not
 * found): each says so, with configure's reason.
 */
#include <config.h>

#include <stddef.h>

#include "mica_int.h"

static mica_status_t absent(mica_context_t *ctx)
{
    return mica__fail(ctx, MICA_ERR_UNSUPPORTED, "this mica was built "
                      "without the ONNX importer (%s)",
                      *MICA_ONNX_WHY ? MICA_ONNX_WHY : "configure");
}

MICA_EXPORT int32_t mica_onnx_available(void)
{
    return 0;
}

MICA_EXPORT int32_t mica_onnx_file_probe(const char *path)
{
    (void)path;
    return 0;
}

MICA_EXPORT mica_status_t mica_onnx_import(mica_context_t *ctx,
                                           const char *path,
                                           const mica_onnx_options_t *opt,
                                           mica_onnx_model_t **out)
{
    (void)path;
    (void)opt;
    if (out)
        *out = NULL;
    return absent(ctx);
}

MICA_EXPORT void mica_onnx_destroy(mica_onnx_model_t *model)
{
    (void)model;
}

MICA_EXPORT mica_status_t mica_onnx_check(mica_context_t *ctx,
                                          const char *path,
                                          const mica_onnx_options_t *opt,
                                          char **report, int32_t *nb_nodes,
                                          int32_t *nb_refused)
{
    (void)path;
    (void)opt;
    if (report)
        *report = NULL;
    if (nb_nodes)
        *nb_nodes = 0;
    if (nb_refused)
        *nb_refused = 0;
    return absent(ctx);
}

MICA_EXPORT mica_status_t mica_onnx_save(mica_onnx_model_t *model,
                                         const char *yaml_path)
{
    (void)model;
    (void)yaml_path;
    return MICA_ERR_UNSUPPORTED;
}

MICA_EXPORT mica_status_t mica_onnx_manifest(mica_onnx_model_t *model,
                                             mica_manifest_t **out)
{
    (void)model;
    if (out)
        *out = NULL;
    return MICA_ERR_UNSUPPORTED;
}

MICA_EXPORT char *mica_onnx_manifest_text(mica_onnx_model_t *model,
                                          const char *weights_file,
                                          size_t *len)
{
    (void)model;
    (void)weights_file;
    if (len)
        *len = 0;
    return NULL;
}

MICA_EXPORT const void *mica_onnx_weights(mica_onnx_model_t *model,
                                          int64_t *bytes)
{
    (void)model;
    if (bytes)
        *bytes = 0;
    return NULL;
}

MICA_EXPORT int64_t mica_onnx_weights_size(const mica_onnx_model_t *model)
{
    (void)model;
    return 0;
}

MICA_EXPORT mica_status_t mica_onnx_op(int32_t i, const char **op,
                                       const char **layers)
{
    (void)i;
    (void)op;
    (void)layers;
    return MICA_ERR_NOT_FOUND;
}

MICA_EXPORT mica_status_t mica_onnx_read_tensor(mica_context_t *ctx,
                                                const char *path,
                                                mica_tensor_desc_t *desc,
                                                void **data)
{
    (void)path;
    (void)desc;
    if (data)
        *data = NULL;
    return absent(ctx);
}
