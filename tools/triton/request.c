/*
 * tools/triton/request.c - one request checked against the model, and its
 * inputs' data located or copied.
 *
 * The server checks requests against the configuration before they reach
 * the backend; the backend checks them again against the engine (names,
 * element types, ranks, fixed dimensions, the batch, byte sizes), so that
 * a request that would make the engine fail is answered with an error of
 * its own and the others of its batch still run.
 */
#include <config.h>

#include "backend.h"

#include <stdio.h>
#include <string.h>

/* "[1, 16]" */
static const char *shape_text(const int64_t *d, uint32_t n, char *buf,
                              size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    uint32_t k;
    for (k = 0; k < n && pos < len; k++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", k ? ", " : "",
                                (long long)d[k]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

/* Whether `name` is one of io[0..n). */
static int known(const mica__tb_io_t *io, int32_t n, const char *name)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (strcmp(io[i].name, name) == 0)
            return 1;
    return 0;
}

/* Check one input's properties; fill `in`. */
static TRITONSERVER_Error *check_input(const mica__tb_model_t *m,
                                       const mica__tb_io_t *io,
                                       TRITONBACKEND_Request *r,
                                       mica__tb_input_t *in)
{
    TRITONSERVER_DataType dt;
    const int64_t *shape;
    uint32_t rank, k, first = m->max_batch > 0;
    uint64_t bytes;
    TRITONSERVER_Error *err;
    char a[160], b[160];
    int64_t n = 1;
    size_t size = mica_dtype_size(io->dtype);

    if ((err = TRITONBACKEND_RequestInput(r, io->name, &in->input))) {
        TRITONSERVER_ErrorDelete(err);
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "the request lacks input '%s'", m->name,
                              io->name);
    }
    if ((err = TRITONBACKEND_InputProperties(in->input, NULL, &dt, &shape,
                                             &rank, &bytes, &in->nb_buffers)))
        return err;
    if (dt != mica__tb_dtype_triton(io->dtype))
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "input '%s' is %s but the model takes %s",
                              m->name, io->name, mica__tb_dtype_triton_name(dt),
                              mica__tb_dtype_triton_name(
                                  mica__tb_dtype_triton(io->dtype)));
    if (rank != (uint32_t)io->dims.nb_dims)
        goto bad_shape;
    memset(&in->dims, 0, sizeof in->dims);
    in->dims.nb_dims = (int32_t)rank;
    for (k = 0; k < rank; k++) {
        if (shape[k] < 0 || (k >= first && io->dims.d[k] >= 0 &&
                             shape[k] != io->dims.d[k]))
            goto bad_shape;
        in->dims.d[k] = shape[k];
        if (shape[k] > 0 && n > INT64_MAX / shape[k])
            goto bad_shape;
        n *= shape[k];
    }
    if (first && (shape[0] < 1 || shape[0] > m->max_batch))
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "input '%s' has a batch of %lld; the model "
                              "takes 1 to %d", m->name, io->name,
                              (long long)shape[0], (int)m->max_batch);
    if ((uint64_t)n > UINT64_MAX / size || (uint64_t)n * size != bytes)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "input '%s' of shape %s holds %llu bytes, not "
                              "%llu", m->name, io->name,
                              shape_text(shape, rank, a, sizeof a),
                              (unsigned long long)bytes,
                              (unsigned long long)n * size);
    in->bytes = bytes;
    return NULL;
bad_shape:
    return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                          "input '%s' has shape %s but the model takes %s%s",
                          m->name, io->name, shape_text(shape, rank, a, sizeof a),
                          shape_text(io->dims.d, (uint32_t)io->dims.nb_dims, b,
                                     sizeof b),
                          first ? " (-1: any; the first is the batch)"
                                : " (-1: any)");
}

TRITONSERVER_Error *mica__tb_request_check(const mica__tb_model_t *m,
                                           TRITONBACKEND_Request *r,
                                           mica__tb_input_t *in,
                                           int64_t *batch)
{
    TRITONSERVER_Error *err;
    uint32_t count, k;
    const char *name;
    int32_t i;

    if ((err = TRITONBACKEND_RequestInputCount(r, &count)))
        return err;
    for (k = 0; k < count; k++) {
        if ((err = TRITONBACKEND_RequestInputName(r, k, &name)))
            return err;
        if (!known(m->inputs, m->nb_inputs, name))
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                  "'%s': the request gives input '%s', which "
                                  "the model does not have", m->name, name);
    }
    if ((err = TRITONBACKEND_RequestOutputCount(r, &count)))
        return err;
    for (k = 0; k < count; k++) {
        if ((err = TRITONBACKEND_RequestOutputName(r, k, &name)))
            return err;
        if (!known(m->outputs, m->nb_outputs, name))
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                  "'%s': the request asks for output '%s', "
                                  "which the model does not have", m->name,
                                  name);
    }
    *batch = 1;
    for (i = 0; i < m->nb_inputs; i++) {
        if ((err = check_input(m, &m->inputs[i], r, &in[i])))
            return err;
        if (m->max_batch > 0 && i > 0 && in[i].dims.d[0] != in[0].dims.d[0])
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                  "'%s': input '%s' has a batch of %lld but "
                                  "input '%s' one of %lld", m->name,
                                  m->inputs[i].name,
                                  (long long)in[i].dims.d[0], m->inputs[0].name,
                                  (long long)in[0].dims.d[0]);
    }
    if (m->max_batch > 0)
        *batch = in[0].dims.d[0];
    return NULL;
}

TRITONSERVER_Error *mica__tb_input_copy(const mica__tb_input_t *in, void *dst,
                                        TRITONSERVER_MemoryType dst_type)
{
    uint64_t done = 0;
    uint32_t b;
    TRITONSERVER_Error *err;

    for (b = 0; b < in->nb_buffers; b++) {
        const void *src;
        uint64_t size;
        TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
        int64_t id = 0;

        if ((err = TRITONBACKEND_InputBuffer(in->input, b, &src, &size, &type,
                                             &id)))
            return err;
        if (size > in->bytes - done)
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "an input's "
                                  "buffers hold more than its %llu bytes",
                                  (unsigned long long)in->bytes);
        if (size && (err = mica__tb_copy((char *)dst + done, dst_type, src,
                                         type, (size_t)size)))
            return err;
        done += size;
    }
    if (done != in->bytes)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "an input's "
                              "buffers hold %llu bytes, not %llu",
                              (unsigned long long)done,
                              (unsigned long long)in->bytes);
    return NULL;
}
