/*
 * tests/boundary.h - calling boundary layers directly (tests/boundary.c),
 * for the loop and conditional module tests.
 */
#ifndef MICA_TEST_BOUNDARY_H
#define MICA_TEST_BOUNDARY_H

#include "expr.h"
#include "harness.h"
#include "mica_int.h"

#define TB_WHY_MAX (MICA_ERROR_MAX + 256)
#define CPU MICA_DEVICE_CPU
#define GPU MICA_DEVICE_CUDA

/* The expression builder of output_dims calls (tb_init makes it). */
extern mica_expr_builder_t *tb_eb;
/* Why the last call failed. */
extern char tb_why[TB_WHY_MAX];
/* tb_step(): input 1 is output 0's memory (a Recurrence's next value). */
extern int tb_alias_next;

void tb_init(void);
void tb_fini(void);

/* An instance of `type` on `dev` from checked fields (freed); NULL, and
 * tb_why set, on failure. */
mica_layer_t *tb_make(const char *type, uint32_t dev, th_fields_t *f);

size_t tb_bytes_of(const th_tensor_t *t);

/*
 * Run step `s` on l (on `dev`; s NULL: the ordinary enqueue) with host
 * tensors in[] (shape-tensor inputs stay on the host) and out[] (read and
 * written back).  Returns the status; tb_why holds the message.
 */
mica_status_t tb_step(mica_layer_t *l, uint32_t dev, mica_step_t *s,
                      int nb_in, th_tensor_t *in, int nb_out,
                      th_tensor_t *out);

mica_step_t tb_mkstep(mica_step_kind_t kind, int64_t i, int64_t trips);

/* Shapes of in[] as constant expressions (values too, for shape
 * tensors); vals holds up to 4 values per input. */
void tb_shapes(int nb_in, const th_tensor_t *in, mica_shape_expr_t *se,
               const mica_expr_t *vals[][4]);

/* Output 0's dims from output_dims on constant shapes; tb_why on failure. */
mica_status_t tb_out_dims(mica_layer_t *l, int nb_in, const th_tensor_t *in,
                          mica_dims_t *dims);

/* supports_format at pos for LINEAR tensors of the types given (inputs
 * then outputs). */
int tb_formats(mica_layer_t *l, int pos, int nb_in, int nb_out,
               const mica_dtype_t *types);
/* output_dtypes; tb_why holds the message. */
mica_status_t tb_dtypes(mica_layer_t *l, int nb_in, const mica_dtype_t *in,
                        int nb_out, mica_dtype_t *out);

/* Destroy l (if any) and return no tensor: a scenario that failed. */
th_tensor_t tb_failed(mica_layer_t *l);

/* One TAP result: the CPU's result `got` is want, exactly. */
void tb_check_cpu(const char *label, const th_tensor_t *want,
                  const th_tensor_t *got);
/* One TAP result: the CUDA result `gpu` is the CPU's, bit for bit. */
void tb_check_gpu(const char *label, const th_tensor_t *cpu,
                  const th_tensor_t *gpu);

/* `expr` (a th_tensor_t of `dev`) on the CPU against want, on CUDA against
 * the CPU. */
#define BOTH(label, want, expr)                                              \
    do {                                                                     \
        uint32_t dev = CPU;                                                  \
        th_tensor_t cpu_ = (expr), gpu_;                                     \
        tb_check_cpu((label), (want), &cpu_);                                \
        if (th_cuda()) {                                                     \
            dev = GPU;                                                       \
            gpu_ = (expr);                                                   \
            tb_check_gpu((label), &cpu_, &gpu_);                             \
            th_free(&gpu_);                                                  \
        } else {                                                             \
            skip("%s: cuda: no usable GPU", (label));                        \
        }                                                                    \
        th_free(&cpu_);                                                      \
    } while (0)

/* `expr` (a th_tensor_t of `dev`) fails on both devices, why containing
 * `needle`. */
#define FAILS(label, needle, expr)                                           \
    do {                                                                     \
        uint32_t dev = CPU;                                                  \
        th_tensor_t t_ = (expr);                                             \
        ok(!t_.data && strstr(tb_why, (needle)), "%s: cpu (%s)", (label),    \
           t_.data ? "succeeded" : tb_why);                                  \
        th_free(&t_);                                                        \
        if (th_cuda()) {                                                     \
            dev = GPU;                                                       \
            t_ = (expr);                                                     \
            ok(!t_.data && strstr(tb_why, (needle)), "%s: cuda (%s)", (label), \
               t_.data ? "succeeded" : tb_why);                              \
            th_free(&t_);                                                    \
        } else {                                                             \
            skip("%s: cuda: no usable GPU", (label));                        \
        }                                                                    \
    } while (0)

#endif
