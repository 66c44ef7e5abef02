/*
 * tests/gen/gen_th.h - the generated cases (gen_case.h) as harness
 * tensors.
 */
#ifndef MICA_TEST_GEN_TH_H
#define MICA_TEST_GEN_TH_H

#include "../harness.h"
#include "gen_case.h"

#define GEN_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A harness tensor holding g's values (malloc'd: th_free it). */
static inline th_tensor_t gen_th(const gen_tensor_t *g)
{
    return th_tensor((mica_dtype_t)g->dtype, g->rank, g->dims, g->v);
}

/* The n tensors of g into t. */
static inline void gen_ths(const gen_tensor_t *g, int n, th_tensor_t *t)
{
    int i;
    for (i = 0; i < n; i++)
        t[i] = gen_th(&g[i]);
}

static inline void gen_free(th_tensor_t *t, int n)
{
    int i;
    for (i = 0; i < n; i++)
        th_free(&t[i]);
}

#endif
