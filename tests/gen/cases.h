/*
 * tests/gen/cases.h - the form of the cases that tests/gen/cnn_gen.py
 * computes with NumPy (independently of mica's code) for the tests of
 * Convolution, Deconvolution, Pooling, LRN and FullyConnected: a layer's
 * fields, its input and the expected output.  The data headers beside it
 * (conv_cases.h, ...) are generated: rerun the script instead of editing
 * them.
 */
#ifndef MICA_TEST_GEN_CASES_H
#define MICA_TEST_GEN_CASES_H

#include <stdint.h>

enum { GEN_INTS = 0, GEN_FLOAT = 1, GEN_STR = 2, GEN_WEIGHTS = 3,
       GEN_BOOL = 4, GEN_INT = 5 };

typedef struct gen_field {
    const char *name;
    int kind;            /* GEN_* */
    int n;               /* GEN_INTS: values; GEN_WEIGHTS: rank */
    const int64_t *ints; /* GEN_INTS values, GEN_WEIGHTS dims */
    double f;            /* GEN_FLOAT, GEN_BOOL, GEN_INT */
    const char *s;       /* GEN_STR */
    const float *w;      /* GEN_WEIGHTS values */
} gen_field_t;

typedef struct gen_case {
    const char *label;
    const char *type;
    int nb_fields;
    const gen_field_t *fields;
    int x_rank;
    int64_t x_dims[8];
    const float *x;
    int y_rank;
    int64_t y_dims[8];
    const float *y;
} gen_case_t;

#endif
