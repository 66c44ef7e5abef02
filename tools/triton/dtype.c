/*
 * tools/triton/dtype.c - element types in their three spellings: mica's
 * (mica_dtype_t), the model configuration's ("TYPE_FP32") and the
 * server API's (TRITONSERVER_TYPE_FP32).  Every mica type has a Triton
 * one; Triton's other types (FP64, UINT16, BYTES...) have no mica one.
 */
#include <config.h>

#include "backend.h"

#include <string.h>

static const struct {
    mica_dtype_t mica;
    const char *config;
    TRITONSERVER_DataType triton;
} types[] = {
    {MICA_FLOAT32, "TYPE_FP32", TRITONSERVER_TYPE_FP32},
    {MICA_FLOAT16, "TYPE_FP16", TRITONSERVER_TYPE_FP16},
    {MICA_INT8, "TYPE_INT8", TRITONSERVER_TYPE_INT8},
    {MICA_INT32, "TYPE_INT32", TRITONSERVER_TYPE_INT32},
    {MICA_BOOL, "TYPE_BOOL", TRITONSERVER_TYPE_BOOL},
    {MICA_INT64, "TYPE_INT64", TRITONSERVER_TYPE_INT64},
    {MICA_UINT8, "TYPE_UINT8", TRITONSERVER_TYPE_UINT8},
    {MICA_BFLOAT16, "TYPE_BF16", TRITONSERVER_TYPE_BF16},
};
#define NB_TYPES (sizeof types / sizeof types[0])

const char *mica__tb_dtype_config(mica_dtype_t dtype)
{
    size_t i;
    for (i = 0; i < NB_TYPES; i++)
        if (types[i].mica == dtype)
            return types[i].config;
    return NULL;
}

int mica__tb_dtype_from_config(const char *name, mica_dtype_t *out)
{
    size_t i;
    for (i = 0; name && i < NB_TYPES; i++)
        if (strcmp(types[i].config, name) == 0) {
            *out = types[i].mica;
            return 0;
        }
    return -1;
}

TRITONSERVER_DataType mica__tb_dtype_triton(mica_dtype_t dtype)
{
    size_t i;
    for (i = 0; i < NB_TYPES; i++)
        if (types[i].mica == dtype)
            return types[i].triton;
    return TRITONSERVER_TYPE_INVALID;
}

const char *mica__tb_dtype_triton_name(TRITONSERVER_DataType dtype)
{
    static const char *const others[] = {
        "INVALID", "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8",
        "INT16", "INT32", "INT64", "FP16", "FP32", "FP64", "BYTES"};
    if ((unsigned)dtype < sizeof others / sizeof others[0])
        return others[dtype];
    return "?";
}
