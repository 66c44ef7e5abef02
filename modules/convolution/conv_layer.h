/*
 * modules/convolution/conv_layer.h - the layer instance of Convolution and
 * Deconvolution, shared by convolution.c (the types and creators) and
 * conv_layer.c (the ops of each implementation).
 */
#ifndef MICA_MOD_CONV_LAYER_H
#define MICA_MOD_CONV_LAYER_H

#include "conv.h"

enum {
    MICA__CONV_REFERENCE = 0,
    MICA__CONV_ONEDNN = 1,
    MICA__CONV_CUDA = 2,
    MICA__CONV_CUDNN = 3
};

/* A creator's user_data: its ops, its type, its implementation. */
typedef struct mica__conv_impl {
    const mica_layer_ops_t *ops;
    int32_t deconv;
    int32_t kind; /* MICA__CONV_* */
} mica__conv_impl_t;

typedef struct mica__conv_layer {
    mica_kit_layer_t base;
    const mica__conv_impl_t *impl;
    mica__conv_params_t p;
    mica__conv_dnnl_t *dnnl;  /* onednn: primitives of the last shape */
    mica__conv_gpu_t *gpu;    /* cuda, cudnn */
    mica_dtype_t io_dtype;    /* cuda, cudnn: the I/O type configured */
} mica__conv_layer_t;

extern const mica_layer_ops_t mica__conv_ops_ref;
extern const mica_layer_ops_t mica__conv_ops_dnnl;
extern const mica_layer_ops_t mica__conv_ops_gpu;
extern const mica_layer_ops_t mica__conv_ops_cudnn;

/* The schema entries of Convolution and Deconvolution (and of
 * FusedConvolution): `one_` points at an int64_t 1, `kernel_doc_` says
 * the kernel's layout. */
#define MICA__CONV_FIELDS(one_, kernel_doc_)                                \
    {"num_output_maps", MICA_FIELD_INT, 1, 1, 0, NULL, NULL,                \
     "output channels M"},                                                  \
    MICA__WINDOW_FIELDS("kernel_size",                                      \
                        "kernel size: 2 values (2D) or 3 (3D)"),            \
    MICA__WINDOW_FIELD("dilation", "kernel dilation per spatial dimension " \
                       "(default 1)"),                                      \
    {"groups", MICA_FIELD_INT, 1, 0, 1, (one_), NULL,                       \
     "groups of channels (default 1; C for a depthwise convolution)"},      \
    {"kernel", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL, (kernel_doc_)},     \
    {"bias", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,                       \
     "M values added to the output maps (optional)"}

/* Read and check the params (convolution.c). */
mica_status_t mica__conv_params_read(const mica_fields_t *f, int deconv,
                                     mica__conv_params_t *p,
                                     mica_error_t *err);
/* Check an input of `rank` with `channels` (when `known`). */
mica_status_t mica__conv_check_input(const mica__conv_params_t *p,
                                     int32_t rank, int64_t channels,
                                     int known, mica_error_t *err);

/* Whether the onednn implementation takes channels last for params p:
 * a 2D Convolution with input channels (conv_layer.c). */
int mica__conv_dnnl_cl(const mica__conv_params_t *p);

/* The creators' create (conv_layer.c). */
mica_layer_t *mica__conv_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err);

#endif /* MICA_MOD_CONV_LAYER_H */
