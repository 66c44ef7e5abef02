/*
 * tests/cnn_cases.h - running the generated cases of tests/gen/ (see
 * tests/gen/cases.h) through the harness: the CPU reference against the
 * NumPy values in float32 and float16, every other implementation against
 * the reference, and again with runtime dimensions.
 */
#ifndef MICA_TEST_CNN_CASES_H
#define MICA_TEST_CNN_CASES_H

#include "gen/cases.h"
#include "harness.h"

/* The case's fields, for th_check and friends (which free them). */
th_fields_t *gc_fields(const gen_case_t *c);
/* The case's input and expected output in `dtype`. */
th_tensor_t gc_x(const gen_case_t *c, mica_dtype_t dtype);
th_tensor_t gc_y(const gen_case_t *c, mica_dtype_t dtype);

/*
 * Every check of one case:
 *   - float32: the reference against NumPy's values (th_check: then the
 *     default CUDA implementation against the reference), and each
 *     implementation in `impls` (NULL-terminated, "device:name", e.g.
 *     "cpu:onednn", "cuda:cuda") against the reference;
 *   - float16: the same with half inputs and outputs (the reference
 *     within one float16 rounding of NumPy's values).
 * `tol` and `tol16` are the tolerances (relative and absolute) of the
 * other implementations against the reference in float32 and float16.
 */
void gc_run(const gen_case_t *c, const char *const *impls, double tol,
            double tol16);

/*
 * The case again with its input's dimensions declared at run time: -1
 * in the batch dimensions (0 .. rank - `fixed` - 1, profile 1 .. twice
 * the size) and in the spatial ones listed in `spatial` (profile: the
 * size .. twice it), then the reference against NumPy's values and each
 * implementation against the reference.  Cases with an empty input are
 * skipped (the profile's smallest batch is 1).
 */
void gc_dynamic(const gen_case_t *c, int fixed, const int *spatial,
                int nb_spatial, const char *const *impls, double tol);

/*
 * One engine of `type` (implementation `impl` pinned on `device`) whose
 * input has runtime dimensions (-1 where lo and hi differ, one profile
 * lo .. hi with opt the first shape), run at each of the nb shapes in
 * turn; one TAP result per shape: the output against the reference's
 * run of that shape alone.  A skip where the implementation or device is
 * missing.  `fields` is called for a new set each time.  Inputs hold a
 * fixed pattern of eighths.
 */
void gc_shapes(const char *label, const char *type,
               th_fields_t *(*fields)(void), uint32_t device,
               const char *impl, int rank, const int64_t *lo,
               const int64_t *hi, int nb,
               const int64_t (*shapes)[MICA_MAX_DIMS], double tol);

/*
 * One TAP result: the engine built with `impl` on `device`, saved to
 * bytes and loaded again, runs x as the reference does and keeps the
 * layer's tactic (one there must be for "cudnn"); a skip where the
 * implementation or device is missing.  Frees `fields`.
 */
void gc_roundtrip(const char *label, const char *type, th_fields_t *fields,
                  const th_tensor_t *x, uint32_t device, const char *impl,
                  double tol);

/*
 * One TAP result (a skip without a GPU): the engine built on CUDA with
 * autotune times both CUDA implementations of `type` ("cuda" and
 * "cudnn" by tactic: its choice names both), keeps the winner and its
 * tactic when saved and loaded, and runs x as the reference does.  Frees
 * `fields`.
 */
void gc_autotune(const char *label, const char *type, th_fields_t *fields,
                 const th_tensor_t *x, double tol);

/*
 * One TAP result (a skip without a GPU or cuDNN): the engine of `type`
 * pinned to "cudnn", built with autotune (float16 allowed with `half`,
 * which runs it channels last) through a timing cache file, then built
 * again once per tactic measured, that tactic forced through the file,
 * and each engine runs x as the reference does; cuDNN's graph API must
 * be among them.  Frees `fields`.
 */
void gc_every_tactic(const char *label, const char *type,
                     th_fields_t *fields, const th_tensor_t *x, int half,
                     double tol);

#endif
