/*
 * modules/common/kit_window.h - the sliding window of Convolution,
 * Deconvolution and Pooling: its params (a window size of 2 or 3 values,
 * stride, padding or pre_padding + post_padding, dilation), the output
 * size it gives, and the checks of an input's spatial dimensions.  Part
 * of the module kit's CNN helpers (libmicamodkit_nn.la), not installed.
 *
 * A window is always held in three dimensions: a 2D one (nd 2) has a
 * leading depth of size 1, stride 1, no padding, dilation 1, so that the
 * implementations loop over three dimensions whatever nd is.  Spatial
 * dimension i of the params is [3 - nd + i] here.
 */
#ifndef MICA_KIT_WINDOW_H
#define MICA_KIT_WINDOW_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__window {
    int32_t nd;        /* 2 or 3: the number of spatial dimensions */
    int32_t transposed; /* Deconvolution: the output size formula */
    int64_t k[3];      /* window (kernel) size */
    int64_t stride[3];
    int64_t dil[3];    /* dilation; 1 where the type has none */
    int64_t pre[3];    /* padding before and after */
    int64_t post[3];
} mica__window_t;

/*
 * The field schemas of a window, for a creator's schema array:
 * MICA__WINDOW_FIELDS(size_name, size_doc) expands to five initializers,
 * the size field (required), stride, padding, pre_padding and
 * post_padding.  A type with dilation lists "dilation" itself.
 */
#define MICA__WINDOW_FIELD(name_, doc_)                                     \
    {(name_), MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL, (doc_)}
#define MICA__WINDOW_FIELDS(size_name_, size_doc_)                          \
    {(size_name_), MICA_FIELD_INT, MICA_COUNT_ANY, 1, 0, NULL, NULL,        \
     (size_doc_)},                                                          \
    MICA__WINDOW_FIELD("stride", "step per spatial dimension (default 1)"), \
    MICA__WINDOW_FIELD("padding", "symmetric padding per spatial "          \
                       "dimension (default 0)"),                            \
    MICA__WINDOW_FIELD("pre_padding", "padding before, per spatial "        \
                       "dimension (default 0)"),                            \
    MICA__WINDOW_FIELD("post_padding", "padding after, per spatial "        \
                       "dimension (default 0)")

/*
 * Read a window from validated fields: `size_name` (2 or 3 values >= 1)
 * decides nd; stride and dilation (when `with_dilation`) have nd values
 * >= 1; padding, pre_padding and post_padding nd values >= 0, padding
 * exclusive of the other two.  MICA_ERR_INVALID with one line in err
 * when a value is out of range or a list has the wrong length.
 */
mica_status_t mica__window_read(const mica_fields_t *f, const char *size_name,
                                int with_dilation, int transposed,
                                mica__window_t *w, mica_error_t *err);

/* The extent of the dilated window along [i]: dil * (k - 1) + 1. */
int64_t mica__window_extent(const mica__window_t *w, int i);

/*
 * The output size along [i] for an input size `in`: floor((in + pre +
 * post - extent) / stride) + 1, or for a transposed window (in - 1) *
 * stride + extent - pre - post.  -1 when the input is too small (the
 * padded input does not hold one window; a transposed output below 0).
 */
int64_t mica__window_out(const mica__window_t *w, int i, int64_t in);

/*
 * Set out->d[first + j] for the nd spatial dimensions j from
 * in->d[first + j]: a constant when the input's is, else an expression;
 * a constant input that is too small fails with one line naming the
 * input dimension, its size, the padding and the window.
 */
mica_status_t mica__window_dims(const mica__window_t *w,
                                const mica_shape_expr_t *in, int32_t first,
                                mica_expr_builder_t *eb,
                                mica_shape_expr_t *out, mica_error_t *err);

/*
 * Check the input's spatial dimensions (from dimension `first` on) at
 * their profile's smallest values, at configure time: as
 * mica__window_dims for a runtime dimension.
 */
mica_status_t mica__window_check(const mica__window_t *w,
                                 const mica_dims_t *min, int32_t first,
                                 mica_error_t *err);

/*
 * supports_format of a window layer (one input, one output of the
 * input's type, float32 or float16): io[pos] may be LINEAR, or, with
 * `channels_last`, the channels-last format of its rank (HWC for 4-D,
 * DHWC for 5-D: mica/types.h) where that rank is nd + 2, one batch
 * dimension before the channels, as those formats lay out N, C and the
 * window's dims; the output always in the input's format.  1 or 0.  The
 * caller decides `channels_last` (its enqueue must handle the layout:
 * see mica__window_channels).
 */
int32_t mica__window_formats(const mica__window_t *w, int channels_last,
                             const mica_tensor_desc_t *io, int32_t pos,
                             int32_t nb_in, int32_t nb_out);

/*
 * Whether a tensor the layer was given (its descriptor) is channels last
 * (a format mica__window_formats accepted other than LINEAR): 1 or 0.
 */
int mica__window_channels(const mica_tensor_desc_t *d);

/* "[3, 3]": the nd values of v (a window array) into buf; buf. */
const char *mica__window_text(const mica__window_t *w, const int64_t *v,
                              char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_WINDOW_H */
