/*
 * tests/gen/gen_case.h - the form of the cases that tests/gen/layers.py
 * writes (tests/gen/NAME_cases.h): inputs, expected outputs and params of
 * one layer, computed independently with NumPy.  Included by the module
 * tests; no code, only types.
 */
#ifndef MICA_TEST_GEN_CASE_H
#define MICA_TEST_GEN_CASE_H

#include <stdint.h>

/* A tensor: a mica_dtype_t value, its dims and row-major values. */
typedef struct gen_tensor {
    int dtype;
    int rank;
    int64_t dims[8];
    const double *v;
} gen_tensor_t;

typedef struct gen_case {
    const char *label;
    const char *text; /* a string or enum param (equation, op, mode) */
    int64_t p0, p1;   /* int params (axis, k); -1: absent */
    int nb_in, nb_out;
    gen_tensor_t in[4];
    gen_tensor_t out[2];
} gen_case_t;

#endif
