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

/* Compare tensor `name` of both runs into d; CLI_ERROR after a message. */
int compare_named(mica_context_t *ctx, mica_exec_t *const x[2],
                  const char *name, double atol, double rtol,
                  mica_tensor_desc_t *da, diff_t *d)
{
    mica_tensor_desc_t db;
    const void *pa, *pb;
    if (mica_exec_get_output(x[0], name, da, &pa) != MICA_OK ||
        mica_exec_get_output(x[1], name, &db, &pb) != MICA_OK)
        return cli_error("output '%s': %s", name, mica_context_error(ctx));
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
                   mica_exec_t *const x[2], double atol, double rtol,
                   int *failed)
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
            if (compare_named(ctx, x, t.name, atol, rtol, &da, &d) != CLI_OK)
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
    printf("): output '%s', max abs error %.6g\n\n", first_tensor,
           first_d.abs_max);
    return CLI_OK;
}
