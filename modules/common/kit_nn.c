/*
 * modules/common/kit_nn.c - the layer glue the CNN modules share: element
 * access of their references, one float input's output_dtypes
 * (kit_nn.h).
 */
#include <config.h>

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
