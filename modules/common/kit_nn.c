/*
 * modules/common/kit_nn.c - the layer glue the CNN modules share: element
 * access of their references, one float input's output_dtypes, a
 * vectorized relu (kit_nn.h).
 */
#include <config.h>

#include <string.h>

#include "mica/kit_half.h"
#include "kit_nn.h"

double mica__nn_get(const void *p, mica_dtype_t t, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

void mica__nn_put(void *p, mica_dtype_t t, int64_t i, double v)
{
    if (t == MICA_FLOAT16)
        ((uint16_t *)p)[i] = mica_kit_float_to_half((float)v);
    else
        ((float *)p)[i] = (float)v;
}

mica_status_t mica__nn_float_dtypes(const mica_layer_t *layer,
                                    const mica_dtype_t *in, int32_t nb_in,
                                    mica_dtype_t *out, int32_t nb_out,
                                    mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    if (in[0] != MICA_FLOAT32 && in[0] != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "takes float32 or float16 input, got %s",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

void mica__nn_relu_f32(float *y, const float *x, int64_t n)
{
    int64_t i = 0, j;
    uint32_t b[16];

    for (; i + 16 <= n; i += 16) {
        memcpy(b, x + i, sizeof b);
        for (j = 0; j < 16; j++)
            b[j] &= -(uint32_t)!(x[i + j] < 0.0f);
        memcpy(y + i, b, sizeof b);
    }
    for (; i < n; i++)
        y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
