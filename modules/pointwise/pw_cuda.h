/*
 * modules/pointwise/pw_cuda.h - the Pointwise layer's CUDA side
 * (pw_cuda.c): compiled code, its bytes in the layer's state, an
 * execution context's module and launches.  CUDA builds only.
 */
#ifndef MICA_MOD_PW_CUDA_H
#define MICA_MOD_PW_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "pointwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The code's bytes read (pointers into them). */
typedef struct pw_code {
    uint64_t hash;        /* of the source and options */
    char arch[16];        /* "90" */
    const void *cubin;    /* NULL if none */
    size_t cubin_size;
    const char *ptx;      /* NUL-terminated */
} pw_code_t;

/* The hash a source's code carries. */
uint64_t pw_cuda_hash(const char *source);

/* Read `size` bytes of code (untrusted: an engine file's): 1, or 0 when
 * they are not code this version writes. */
int pw_code_read(const void *bytes, size_t size, pw_code_t *c);

/*
 * The code of `source` for the current device (or the configured
 * architecture where none is usable), compiled with NVRTC unless this
 * process compiled it before: malloc'd bytes (pw_code_read's form) into
 * *bytes and *size.  Says at info level, for layer `name`, that it
 * compiled and how long it took.
 */
mica_status_t pw_cuda_compile(const char *source, const char *name,
                              unsigned char **bytes, size_t *size,
                              mica_error_t *err);

/* An execution context's module, kernels and coefficients. */
typedef struct pw_gpu pw_gpu_t;

/* Load `code` for p (layer `name`, for messages) on the current device. */
mica_status_t pw_cuda_init(const pw_prog_t *p, const pw_code_t *code,
                           const char *name, pw_gpu_t **out,
                           mica_error_t *err);
void pw_cuda_free(pw_gpu_t *g);

/* Launch every class's kernel on `stream` (views from pw_views). */
mica_status_t pw_cuda_run(const pw_gpu_t *g, const pw_prog_t *p,
                          const mica_tensor_desc_t *in,
                          const mica_tensor_desc_t *out,
                          const void *const *inputs, void *const *outputs,
                          const pw_view_t *views, void *stream,
                          mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_PW_CUDA_H */
