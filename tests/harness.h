/*
 * tests/harness.h - run one layer through the public API on the CPU and,
 * where a GPU is usable, on CUDA, and compare.
 *
 * Each th_check() emits exactly two TAP results: the CPU reference against
 * the expected values, then CUDA against the CPU reference (a TAP skip
 * where no GPU is usable).  Inputs of the one-layer network are named
 * "in0".."inN-1" and outputs "out0".."outM-1".  An input with data NULL
 * is an omitted optional input.
 */
#ifndef MICA_TEST_HARNESS_H
#define MICA_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"
#include "tap.h"

typedef struct th_tensor {
    mica_dtype_t dtype;
    mica_dims_t dims;
    void *data;   /* malloc'd; NULL for an omitted input */
    int is_shape; /* as an input: a shape-tensor network input */
    unsigned runtime; /* as an input: bit k makes dimension k a runtime
                       * dimension (th_runtime) */
} th_tensor_t;

/* A tensor of `dtype` with the given dims, elements from `values` (as
 * doubles, converted; NULL: zero-filled).  nb_dims 0 is a scalar. */
th_tensor_t th_tensor(mica_dtype_t dtype, int nb_dims, const int64_t *dims,
                      const double *values);
/* Same, dims given inline: th_t(MICA_FLOAT32, vals, 2, 2, 3). */
th_tensor_t th_t(mica_dtype_t dtype, const double *values, int nb_dims, ...);
/*
 * Mark t (int32, rank 0 or 1) to be passed as a shape-tensor network
 * input, with one profile whose min, opt and max values are its values.
 * Returns t.
 */
th_tensor_t th_shape(th_tensor_t t);
/*
 * Mark dimensions of t (bit k: dimension k; TH_ALL_DIMS: every one) as
 * runtime dimensions of the network input, -1 at build time, with one
 * profile whose min is 1 (0 for a length of 0), opt the length and max
 * twice it (a length of 1 stays 1: a broadcast stays one at the maximum);
 * the run gives t's own dims.  Returns t.
 */
#define TH_ALL_DIMS (~0u)
th_tensor_t th_runtime(th_tensor_t t, unsigned mask);
/* An omitted optional input. */
th_tensor_t th_none(void);
int64_t th_volume(const th_tensor_t *t);
double th_get(const th_tensor_t *t, int64_t i);
void th_set(th_tensor_t *t, int64_t i, double v);
void th_free(th_tensor_t *t);

/* Fields under construction: values are copied. */
typedef struct th_fields th_fields_t;
th_fields_t *th_fields(void);
th_fields_t *th_f_int(th_fields_t *f, const char *name, int64_t v);
th_fields_t *th_f_ints(th_fields_t *f, const char *name, int n,
                       const int64_t *v);
th_fields_t *th_f_float(th_fields_t *f, const char *name, double v);
th_fields_t *th_f_floats(th_fields_t *f, const char *name, int n,
                         const double *v);
th_fields_t *th_f_bool(th_fields_t *f, const char *name, int v);
/* A string, also for ENUM and DTYPE fields ("sum", "float16"). */
th_fields_t *th_f_str(th_fields_t *f, const char *name, const char *v);
/* A list of n strings (a STRING field of count n). */
th_fields_t *th_f_strs(th_fields_t *f, const char *name, int n,
                       const char *const *v);
/* A weights field from a tensor (data copied). */
th_fields_t *th_f_weights(th_fields_t *f, const char *name,
                          const th_tensor_t *t);
/* A list of n weights (a field of count n, n >= 0) from tensors. */
th_fields_t *th_f_weights_list(th_fields_t *f, const char *name, int n,
                               const th_tensor_t *t);
const mica_fields_t *th_fields_view(th_fields_t *f);
void th_fields_free(th_fields_t *f);

/* The shared context, modules loaded from the build tree (bails if no
 * module could be loaded). */
mica_context_t *th_context(void);
/* Non-zero where CUDA can run. */
int th_cuda(void);

/*
 * Add layer `name` of `type` to net, reading input a (and b if not
 * NULL), defining `out`, with one string field key=value (key NULL: no
 * field).  Bails with the context's message if the layer is refused.
 */
void th_add_layer(mica_network_t *net, const char *name, const char *type,
                  const char *key, const char *value, const char *a,
                  const char *b, const char *out);

/*
 * Build the one-layer network and run it on `device`.  Outputs are
 * allocated into out[0..nb_out-1].  On failure returns the status and
 * th_error() holds the message.
 */
mica_status_t th_run(uint32_t device, const char *type, th_fields_t *fields,
                     int nb_in, const th_tensor_t *in, int nb_out,
                     th_tensor_t *out);
const char *th_error(void);

/*
 * Compare: same dtype and dims, and every element within
 * atol + rtol*|want| (NaN matches NaN, inf matches inf of the same sign).
 * Writes the first difference into why.
 */
int th_same(const th_tensor_t *want, const th_tensor_t *got, double rtol,
            double atol, char *why, size_t whylen);

/*
 * Two TAP results: CPU against `expect`, CUDA against the CPU result
 * (skip without a GPU).  Frees `fields`.  Returns 1 if both passed.
 */
int th_check(const char *label, const char *type, th_fields_t *fields,
             int nb_in, const th_tensor_t *in, int nb_out,
             const th_tensor_t *expect, double tol);

/*
 * One TAP result "LABEL: cpu": the one-layer network on the CPU alone
 * gives `want` (one output) within rtol and atol (th_same), for what
 * only the CPU computes (types CUDA refuses).  Frees `fields`.  Returns
 * 1 if it passed.
 */
int th_check_cpu(const char *label, const char *type, th_fields_t *fields,
                 int nb_in, const th_tensor_t *in, const th_tensor_t *want,
                 double rtol, double atol);

/*
 * One TAP result "LABEL: refused": implementation `impl` of `type` on
 * `device` (made by th_instance from `fields`, no GPU needed) refuses
 * input 0 of type t (its supports_format, every tensor of type t and
 * dims [3]); a skip where the build has no such implementation.  Frees
 * `fields`.
 */
void th_refused(const char *label, const char *type, uint32_t device,
                const char *impl, th_fields_t *fields, mica_dtype_t t,
                int nb_in);

/*
 * One TAP result: building or running on the CPU fails, with a message
 * that contains `needle`.  Frees `fields`.
 */
int th_check_error(const char *label, const char *type, th_fields_t *fields,
                   int nb_in, const th_tensor_t *in, int nb_out,
                   const char *needle);

/*
 * th_check_error on `device`: MICA_DEVICE_CPU as th_check_error,
 * MICA_DEVICE_CUDA a TAP skip where no GPU is usable.
 */
int th_check_error_on(uint32_t device, const char *label, const char *type,
                      th_fields_t *fields, int nb_in, const th_tensor_t *in,
                      int nb_out, const char *needle);

/*
 * Pin the implementation of the layer in the runs that follow: `cpu` on
 * the CPU, `cuda` on CUDA (NULL: the builder's choice, the highest
 * priority).  Stays until changed; th_pin(NULL, NULL) restores the
 * default.
 */
void th_pin(const char *cpu, const char *cuda);

/*
 * Declare input `index` of the runs that follow with runtime dimensions:
 * -1 wherever min and max differ, and one optimization profile with
 * min, max and, as opt, the dims of the tensor passed.  Stays until
 * th_dynamic(-1, 0, NULL, NULL).  min and max have nd values, the
 * input's rank.
 */
void th_dynamic(int index, int nd, const int64_t *min, const int64_t *max);

/*
 * Channels last for the CUDA runs that follow (on 1, off 0): every
 * float32 or float16 input of rank 4 or 5 is a network input in
 * MICA_FORMAT_HWC (4-D) or DHWC (5-D), and every output in the format of
 * input 0's rank, the data reordered from and back to the tensors'
 * linear order here; the build must then have inserted no reorder (the
 * layer ran in that format), else the run fails saying so.  CPU runs
 * (the reference) stay linear.  Stays until changed.
 */
void th_channels_last(int on);

/*
 * As th_channels_last for the CPU runs that follow (on 1, off 0) of an
 * implementation pinned other than the reference (th_check_impl's
 * `impl`, th_pin's): the reference, linear, computes what they are
 * compared with.  Stays until changed.
 */
void th_channels_last_cpu(int on);

/* Whether implementation `impl` of `type` exists for `device` (a
 * MICA_DEVICE_* bit) in the harness's context: 1 or 0. */
int th_has_impl(const char *type, uint32_t device, const char *impl);

/*
 * One TAP result: implementation `impl` of `type` on `device` against
 * the CPU reference (implementation "reference"), within tol (relative
 * and absolute).  A skip where `device` is not usable or has no such
 * implementation.  Frees `fields`.  Returns 1 unless it failed.
 */
int th_check_impl(const char *label, const char *type, th_fields_t *fields,
                  int nb_in, const th_tensor_t *in, int nb_out,
                  uint32_t device, const char *impl, double tol);

/*
 * An instance of implementation `impl` of `type` for `device` made by its
 * creator straight from `fields` (unchecked: give well-formed ones), with
 * no network, build or GPU: for tests of an instance's answers
 * (supports_format, tactics) where no device can run it.  NULL when the
 * implementation is not registered or create fails (th_error() says
 * why).  Frees `fields`; destroy the instance with its ops->destroy.
 */
mica_layer_t *th_instance(const char *type, uint32_t device,
                          const char *impl, th_fields_t *fields);
/* Call set_tactic on an instance of th_instance: its status, the
 * message in th_error(). */
mica_status_t th_set_tactic(mica_layer_t *layer, int32_t tactic);

/*
 * One TAP result: an instance of `impl` of `type` for `device` made
 * straight from `fields` (th_instance: no GPU needed) answers `want`
 * (1 or 0) to supports_format for an input of `dtype` with dims `x`
 * (rank r) in format `fin` and an output of that type, rank and dims in
 * `fout` (both positions asked, as the builder does: accepted when
 * both are).  A skip where the implementation is not in this build.
 * Frees `fields`.
 */
void th_check_formats(const char *label, const char *type,
                      uint32_t device, const char *impl, th_fields_t *fields,
                      mica_dtype_t dtype, int r, const int64_t *x,
                      uint32_t fin, uint32_t fout, int want);

#endif
