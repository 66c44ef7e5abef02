/*
 * modules/pointwise/pw_args.h - what a Pointwise CUDA kernel takes: one
 * struct, by value, the same for the host (pw_cuda.c) and the kernels
 * NVRTC compiles (pw_gen.c's source includes this very header), so that
 * both sides agree on its layout.  C and CUDA C++.
 */
#ifndef MICA_MOD_PW_ARGS_H
#define MICA_MOD_PW_ARGS_H

#include <stdint.h>

#include "mica/types.h"

/* The most leaves (inputs and coefficients) and outputs one class reads
 * and writes: they bound the kernel's parameters (under 4 KiB). */
#define PW_MAX_LEAVES 24
#define PW_MAX_OUTPUTS 8

/*
 * One launch: a class's n elements over its view (pointwise.h's
 * pw_view_t: rank folded dimensions d, leaf k's element strides s[k]),
 * each leaf's memory and each output's (in the class's order).  Outputs
 * are dense in the order of the view.
 */
typedef struct pw_args {
    int64_t n;
    int32_t rank;
    int32_t reserved_;
    int64_t d[MICA_MAX_DIMS];
    const void *leaf[PW_MAX_LEAVES];
    void *out[PW_MAX_OUTPUTS];
    int64_t s[PW_MAX_LEAVES][MICA_MAX_DIMS];
} pw_args_t;

#endif /* MICA_MOD_PW_ARGS_H */
