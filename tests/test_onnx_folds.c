/*
 * tests/test_onnx_folds.c - the importer's folds on the checked tensor
 * type (issue 25): a constant re-dimmed by a folded Reshape to dimensions
 * of another size, then folded by Concat, Gather or Add, is refused with
 * one line naming the node (before, the folds read and wrote past their
 * buffers: fuzz/regress/onnx/fold-*.onnx, made by tests/onnx/make_folds.py);
 * and the same folds on consistent constants still compute their values
 * (tests/onnx/models/folds-ok.onnx).  TAP on stdout.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "mica/mica.h"

static char path[1024];

static const char *model(const char *dir, const char *name)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    snprintf(path, sizeof path, "%s/%s/%s.onnx", top ? top : ".", dir, name);
    return path;
}

/* The import of fuzz/regress/onnx/NAME.onnx is refused, the message
 * holding `want`. */
static void refused(mica_context_t *ctx, const char *name, const char *want)
{
    mica_onnx_model_t *m = NULL;
    mica_status_t st = mica_onnx_import(ctx, model("fuzz/regress/onnx", name),
                                        NULL, &m);
    ok(st == MICA_ERR_INVALID && m == NULL, "%s: refused (status %d)", name,
       (int)st);
    contains(mica_context_error(ctx), want, "  saying why");
    ok(!strchr(mica_context_error(ctx), '\n'), "  in one line");
    mica_onnx_destroy(m);
}

int main(void)
{
    mica_context_t *ctx = NULL;
    mica_onnx_model_t *m = NULL;
    char *text;

    if (!mica_onnx_available())
        skip_all("built without the ONNX importer");
    if (mica_context_create(&ctx) != MICA_OK)
        bail("no context");
    plan_lazy();

    refused(ctx, "fold-reshape-concat", "node 'Reshape_0' (Reshape, opset "
            "13): a reshape of 6 elements (constant 'six') to [1000]");
    refused(ctx, "fold-reshape-1000x1000",
            "a reshape of 6 elements (constant 'six') to [1000, 1000]");
    refused(ctx, "fold-reshape-4x-1",
            "a reshape of 6 elements (constant 'six') to [4, -1]");
    refused(ctx, "fold-reshape-gather",
            "a reshape of 6 elements (constant 'six') to [64]");
    refused(ctx, "fold-reshape-add",
            "a reshape of 3 elements (constant 'three') to [64]");
    refused(ctx, "fold-add-no-broadcast", "node 'Add_0' (Add, opset 13): "
            "dimension 0 is 6 in 'six' and 3 in 'three': they do not "
            "broadcast");

    /* Reshape to [2, -1] and back, Concat, Add (broadcast), Gather: all
     * folded, [0..5, 0..2] + 1 gathered at [8, 0, -1]. */
    if (!ok(mica_onnx_import(ctx, model("tests/onnx/models", "folds-ok"),
                             NULL, &m) == MICA_OK, "folds-ok: imported"))
        diag("%s", mica_context_error(ctx));
    text = m ? mica_onnx_manifest_text(m, NULL, NULL) : NULL;
    contains(text ? text : "", "out: {dtype: int32, shape: [3], data: [3, 1, "
             "3]}", "  the folds computed the values");
    free(text);
    mica_onnx_destroy(m);
    mica_context_destroy(ctx);
    return exit_status();
}
