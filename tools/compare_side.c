/*
 * tools/compare_side.c - one side of `mica compare` (compare.h): the
 * tensors of a mica run, of an ONNX Runtime run (tools/compare_ort.c
 * adds them) or of saved .npy files (outputs=DIR, read on demand), asked
 * for by name.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "npy.h"

int compare_side_add(compare_side_t *s, const char *name,
                     const mica_tensor_desc_t *d, void *data)
{
    if (s->nb == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        char **n = realloc(s->names, (size_t)cap * sizeof *n);
        mica_tensor_desc_t *ds;
        void **v;
        if (n)
            s->names = n;
        ds = n ? realloc(s->descs, (size_t)cap * sizeof *ds) : NULL;
        if (ds)
            s->descs = ds;
        v = ds ? realloc(s->data, (size_t)cap * sizeof *v) : NULL;
        if (!v) {
            free(data);
            return cli_error("out of memory");
        }
        s->data = v;
        s->cap = cap;
    }
    if (!(s->names[s->nb] = strdup(name))) {
        free(data);
        return cli_error("out of memory");
    }
    s->descs[s->nb] = *d;
    s->data[s->nb++] = data;
    return CLI_OK;
}

/* outputs=DIR: read DIR/NAME.npy into s. */
static int read_saved(compare_side_t *s, const char *name)
{
    char *path = cli_npy_path(s->dir, name), err[1024];
    mica__npy_t npy;
    mica_tensor_desc_t d;
    int rc;

    if (!path)
        return cli_error("out of memory");
    memset(&npy, 0, sizeof npy);
    if (mica__npy_read(path, &npy, err, sizeof err) != MICA_OK) {
        rc = cli_error("%s: output '%s' of %s: %s", s->which, name, s->dir,
                       err);
        free(path);
        return rc;
    }
    free(path);
    memset(&d, 0, sizeof d);
    d.dtype = npy.dtype;
    d.dims = npy.dims;
    return compare_side_add(s, name, &d, npy.data);
}

int compare_get(mica_context_t *ctx, compare_side_t *s, const char *name,
                mica_tensor_desc_t *d, const void **data)
{
    int k;

    if (s->exec) {
        if (mica_exec_get_output(s->exec, name, d, data) != MICA_OK)
            return cli_error("%s: output '%s': %s", s->which, name,
                             mica_context_error(ctx));
        return CLI_OK;
    }
    for (k = 0; k < s->nb && strcmp(s->names[k], name); k++)
        ;
    if (k == s->nb) {
        if (!s->dir)
            return cli_error("%s: the model has no output '%s' (its "
                             "outputs: %d)", s->which, name, s->nb);
        if (read_saved(s, name) != CLI_OK)
            return CLI_ERROR;
    }
    *d = s->descs[k];
    *data = s->data[k];
    return CLI_OK;
}

void compare_side_free(compare_side_t *s)
{
    int k;
    for (k = 0; k < s->nb; k++) {
        free(s->names[k]);
        free(s->data[k]);
    }
    free(s->names);
    free(s->descs);
    free(s->data);
    s->names = NULL;
    s->descs = NULL;
    s->data = NULL;
    s->nb = s->cap = 0;
}
