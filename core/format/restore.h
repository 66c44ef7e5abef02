/*
 * core/format/restore.h - restoring an engine from a file of format 3,
 * shared by restore.c (the payload read into an engine), restore_layers.c
 * (each layer's creator and instances) and restore_check.c (what must
 * hold before the engine may run).
 */
#ifndef MICA_RESTORE_H
#define MICA_RESTORE_H

#include "format.h"
#include "graph.h"

typedef struct mica__restore {
    mica__load_t *l;
    mica_context_t *ctx;
    mica__in_t *r;
    mica_engine_t *e;
    const mica_expr_t **nodes;   /* the expression table, by id */
    uint32_t nb_nodes;
    uint32_t *uppers;            /* per symbol: its bound's expression */
    int32_t nb_prog_cap;
} mica__restore_t;

/*
 * "WHAT is corrupt: bad WHERE, DETAIL" on the context (MICA_ERR_INVALID):
 * a file whose fields do not hold together.
 */
mica_status_t mica__restore_bad(mica__restore_t *x, const char *where,
                                const char *fmt, ...) MICA_PRINTF(3, 4);

/*
 * Read layer `step`'s record into the engine: its creator for the
 * engine's device (the saved implementation, or the deploy-time choice
 * for a layer that did not pin one), the instance made from its saved
 * state (checked first: mica__instance_from_state), and its CPU twin
 * when it computes shape tensors on the host (restore_layers.c).
 */
mica_status_t mica__restore_layer(mica__restore_t *x, int32_t step);

/*
 * What restore_check.c checks once everything is read, in this order,
 * each failing with one line: how tensors, layers, symbols and
 * constructs refer to each other; the program; each layer's instance
 * against what the file says of it (output count, output types, input
 * kinds, the format combination, a boundary layer's callbacks); each
 * profile's ranges; configure and workspace for every profile, and the
 * memory plan (planned again where a module's workspace grew).
 */
mica_status_t mica__restore_check_graph(mica__restore_t *x);
mica_status_t mica__restore_check_program(mica__restore_t *x);
mica_status_t mica__restore_check_layers(mica__restore_t *x);
mica_status_t mica__restore_check_profiles(mica__restore_t *x);
/* Each layer's output shapes derived again from its restored inputs and
 * compared with the file's (restore_shapes.c). */
mica_status_t mica__restore_check_shapes(mica__restore_t *x);
mica_status_t mica__restore_check_plans(mica__restore_t *x);

#endif /* MICA_RESTORE_H */
