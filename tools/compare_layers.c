/*
 * tools/compare_layers.c - the parts of `mica compare` that walk the
 * engines: --all-layers's marks (every tensor a top-level layer computes
 * on the device becomes a network output, through the public API), the
 * comparison of every marked tensor in execution order with the first
 * layer that diverges, and the implementations that differ between A and
 * B.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"

/*
 * Mark every tensor that a layer at top level computes on the device as
 * a network output (the engine built without marks says which);
 * *nb_marked gets how many.
 */
int compare_mark_all(mica_context_t *ctx, mica_manifest_t *m,
                     mica_engine_t *probe, int *nb_marked)
{
    int32_t t, nb = mica_engine_nb_tensors(probe);

    *nb_marked = 0;
    for (t = 0; t < nb; t++) {
        mica_tensor_info_t info;
        mica_layer_info_t layer;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        memset(&layer, 0, sizeof layer);
        layer.struct_size = sizeof layer;
        if (mica_engine_tensor(probe, t, &info) != MICA_OK || info.is_input ||
            info.is_output || info.producer < 0 ||
            (info.kind != MICA_TENSOR_EXECUTION &&
             info.kind != MICA_TENSOR_BOTH) ||
            mica_engine_layer(probe, info.producer, &layer) != MICA_OK ||
            layer.construct >= 0)
            continue;
        if (mica_network_mark_output(mica_manifest_network(m), info.name,
                                     NULL) != MICA_OK)
            return cli_error("--all-layers: tensor '%s': %s", info.name,
                             mica_context_error(ctx));
        (*nb_marked)++;
    }
    return CLI_OK;
}

/* Compare tensor `name` of both sides into d; CLI_ERROR after a
 * message. */
int compare_named(mica_context_t *ctx, compare_side_t s[2],
                  const char *name, double atol, double rtol,
                  mica_tensor_desc_t *da, diff_t *d)
{
    mica_tensor_desc_t db;
    const void *pa, *pb;
    if (compare_get(ctx, &s[0], name, da, &pa) != CLI_OK ||
        compare_get(ctx, &s[1], name, &db, &pb) != CLI_OK)
        return CLI_ERROR;
    return diff_tensors(da, pa, &db, pb, atol, rtol, d);
}

/* Layers whose implementation differs between the engines, said once. */
void compare_print_choices(mica_engine_t *const e[2])
{
    int32_t i, j, nb = mica_engine_nb_layers(e[0]), n = 0;
    for (i = 0; i < nb; i++) {
        mica_layer_info_t a, b;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        if (mica_engine_layer(e[0], i, &a) != MICA_OK)
            continue;
        for (j = 0; j < mica_engine_nb_layers(e[1]); j++) {
            memset(&b, 0, sizeof b);
            b.struct_size = sizeof b;
            if (mica_engine_layer(e[1], j, &b) == MICA_OK &&
                !strcmp(a.name, b.name) &&
                strcmp(a.implementation, b.implementation) != 0) {
                printf("%s  layer '%s' (%s): A %s, B %s\n",
                       n++ ? "" : "implementations that differ:\n", a.name,
                       a.type, a.implementation, b.implementation);
            }
        }
    }
}

/*
 * --all-layers: every marked tensor in execution order of A's layers;
 * the first layer with a diverging output is named.  *failed set.
 */
int compare_layers(mica_context_t *ctx, mica_engine_t *const e[2],
                   compare_side_t s[2], const compare_origin_t *origin,
                   double atol, double rtol, int *failed)
{
    int32_t i, k, nb = mica_engine_nb_layers(e[0]);
    mica_layer_info_t first;
    const char *first_tensor = NULL;
    diff_t d, first_d = {0};
    mica_tensor_desc_t da;

    memset(&first, 0, sizeof first);
    printf("every layer's outputs (--all-layers), in execution order:\n");
    for (i = 0; i < nb; i++) {
        mica_layer_info_t l;
        memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        if (mica_engine_layer(e[0], i, &l) != MICA_OK || l.construct >= 0)
            continue;
        for (k = 0; k < l.nb_outputs; k++) {
            mica_tensor_info_t t;
            memset(&t, 0, sizeof t);
            t.struct_size = sizeof t;
            if (l.outputs[k] < 0 ||
                mica_engine_tensor(e[0], l.outputs[k], &t) != MICA_OK ||
                !t.is_output)
                continue;
            if (compare_named(ctx, s, t.name, atol, rtol, &da, &d) != CLI_OK)
                return CLI_ERROR;
            diff_print_short(stdout, t.name, l.name, &d);
            if (diff_failed(&d) && !first_tensor) {
                first = l;
                first_tensor = t.name;
                first_d = d;
            }
        }
    }
    if (!first_tensor) {
        printf("no layer diverges\n\n");
        return CLI_OK;
    }
    *failed = 1;
    printf("first layer that diverges: '%s' (%s, implementation %s in A",
           first.name, first.type, first.implementation);
    for (i = 0; i < mica_engine_nb_layers(e[1]); i++) {
        mica_layer_info_t b;
        memset(&b, 0, sizeof b);
        b.struct_size = sizeof b;
        if (mica_engine_layer(e[1], i, &b) == MICA_OK &&
            !strcmp(b.name, first.name))
            printf(", %s in B", b.implementation);
    }
    printf("): output '%s', max abs error %.6g\n", first_tensor,
           first_d.abs_max);
    if (origin && compare_origin_of(origin, first.name)) {
        char list[1024];
        size_t len = 0;
        list[0] = '\0';
        for (i = 0; i < first.nb_inputs; i++) {
            mica_tensor_info_t t;
            memset(&t, 0, sizeof t);
            t.struct_size = sizeof t;
            if (first.inputs[i] >= 0 && len < sizeof list &&
                mica_engine_tensor(e[0], first.inputs[i], &t) == MICA_OK)
                len += (size_t)snprintf(list + len, sizeof list - len,
                                        "%s'%s'", len ? ", " : "", t.name);
        }
        printf("the ONNX node it comes from: %s, inputs %s, output '%s'\n",
               compare_origin_of(origin, first.name), list, first_tensor);
    }
    printf("\n");
    return CLI_OK;
}

/* The layer name of a manifest line "  - {name: NAME, ...", malloc'd;
 * NULL if the line is none. */
static char *layer_name(const char *line, size_t n)
{
    static const char lead[] = "  - {name: ";
    const char *p = line + sizeof lead - 1, *end = line + n;
    char *out, *q;

    if (n < sizeof lead || strncmp(line, lead, sizeof lead - 1))
        return NULL;
    if (!(q = out = malloc(n)))
        return NULL;
    if (*p == '"') {
        for (p++; p < end && *p != '"'; p++)
            *q++ = *p == '\\' && p + 1 < end ? *++p : *p;
    } else {
        for (; p < end && *p != ','; p++)
            *q++ = *p;
    }
    *q = '\0';
    return out;
}

int compare_origin_read(mica_context_t *ctx, const char *path,
                        compare_origin_t *o)
{
    mica_onnx_model_t *model = NULL;
    char *text = NULL, *node = NULL;
    const char *p, *end;
    size_t len = 0;
    int rc = CLI_ERROR;

    memset(o, 0, sizeof *o);
    if (cli_onnx_import(ctx, path, &model) != CLI_OK)
        return CLI_ERROR;
    if (!(text = mica_onnx_manifest_text(model, "x.weights", &len))) {
        cli_error("%s: %s", path, mica_context_error(ctx));
        goto out;
    }
    for (p = text, end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *name;
        if (n > 9 && !strncmp(p, "  # ONNX ", 9)) {
            free(node);
            if (!(node = malloc(n - 8)))
                goto nomem;
            memcpy(node, p + 9, n - 9);
            node[n - 9] = '\0';
        } else if (node && (name = layer_name(p, n))) {
            char **l = realloc(o->layer, (size_t)(o->nb + 1) * sizeof *l);
            char **d = l ? realloc(o->node, (size_t)(o->nb + 1) * sizeof *d)
                         : NULL;
            if (l)
                o->layer = l;
            if (d)
                o->node = d;
            if (!d || !(o->node[o->nb] = strdup(node))) {
                free(name);
                goto nomem;
            }
            o->layer[o->nb++] = name;
        }
        p += n + 1;
    }
    rc = CLI_OK;
    goto out;
nomem:
    cli_error("out of memory");
out:
    free(node);
    if (text)
        mica_free(text);
    mica_onnx_destroy(model);
    return rc;
}

const char *compare_origin_of(const compare_origin_t *o, const char *layer)
{
    int k;
    for (k = 0; k < o->nb; k++)
        if (!strcmp(o->layer[k], layer))
            return o->node[k];
    return NULL;
}

void compare_origin_free(compare_origin_t *o)
{
    int k;
    for (k = 0; k < o->nb; k++) {
        free(o->layer[k]);
        free(o->node[k]);
    }
    free(o->layer);
    free(o->node);
    memset(o, 0, sizeof *o);
}
