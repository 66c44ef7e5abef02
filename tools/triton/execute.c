/*
 * tools/triton/execute.c - TRITONBACKEND_ModelInstanceExecute: the
 * requests the server hands one instance, checked, batched, run on the
 * instance's execution context, and answered.
 *
 * Each request is checked first (request.c); one that fails is answered
 * with its error and the others go on.  With max_batch_size > 0, the
 * requests (the dynamic batcher's batch) are run together along the
 * engine's runtime first dimension, in groups whose other dimensions
 * agree and whose batches add up to max_batch_size at most; without
 * batching each request runs alone.  A group runs on the profile that
 * admits its shapes with the smallest maximum batch (the first one that
 * admits them without batching).
 *
 * Copies are avoided where the memory allows: a group of one request
 * whose input is one buffer in the engine's memory (host memory for a CPU
 * engine, the instance's GPU for a CUDA one), aligned at 16 bytes, is
 * bound to the engine as it is; so is an output buffer that the server
 * gives in that memory.  Otherwise inputs are gathered into a host buffer
 * per input and outputs copied out of the execution context's.
 *
 * Every response carries the parameter "mica_instance" (the instance that
 * ran it).  Statistics: each request's times, and each group's batch.
 */
#include <config.h>

#include "backend.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 16

/* One request of the call. */
typedef struct pending {
    TRITONBACKEND_Request *request;
    TRITONSERVER_Error *error;   /* why it fails, NULL while it does not */
    TRITONBACKEND_Response *response;
    int64_t batch;               /* its leading dimension (1 unbatched) */
    int32_t grouped;
    uint64_t compute_start, compute_end;
} pending_t;

/* What one call works with. */
typedef struct call {
    mica__tb_instance_t *in;
    const mica__tb_model_t *m;
    pending_t *p;
    uint32_t n;
    mica__tb_input_t *inputs;    /* n x nb_inputs */
    uint8_t *wants;              /* n x nb_outputs: requested */
    void **obuf;                 /* n x nb_outputs: the response's buffer */
    TRITONSERVER_MemoryType *otype;
    uint32_t *group;             /* indices of the group running */
    uint32_t k;                  /* its size */
    int64_t total;               /* its batch */
} call_t;

/* Whether memory of `type` at `ptr` is the engine's own. */
static int engine_memory(const mica__tb_instance_t *in,
                         TRITONSERVER_MemoryType type, int64_t id,
                         const void *ptr)
{
    if ((uintptr_t)ptr % ALIGN)
        return 0;
    if (in->device == MICA_DEVICE_CUDA)
        return type == TRITONSERVER_MEMORY_GPU && id == in->device_id;
    return type != TRITONSERVER_MEMORY_GPU;
}

static TRITONSERVER_MemoryType engine_type(const mica__tb_instance_t *in)
{
    return in->device == MICA_DEVICE_CUDA ? TRITONSERVER_MEMORY_GPU
                                          : TRITONSERVER_MEMORY_CPU;
}

/* Fail every request of the group with err's code and message. */
static void fail_group(call_t *c, TRITONSERVER_Error *err)
{
    uint32_t g;
    for (g = 0; g < c->k; g++) {
        pending_t *p = &c->p[c->group[g]];
        if (!p->error)
            p->error = TRITONSERVER_ErrorNew(TRITONSERVER_ErrorCode(err),
                                             TRITONSERVER_ErrorMessage(err));
    }
    TRITONSERVER_ErrorDelete(err);
}

/* Give the engine the group's inputs: bound in place, or gathered. */
static TRITONSERVER_Error *set_inputs(call_t *c)
{
    mica__tb_instance_t *in = c->in;
    const mica__tb_model_t *m = c->m;
    TRITONSERVER_Error *err;
    mica_status_t st;
    int32_t i;
    uint32_t g;

    for (i = 0; i < m->nb_inputs; i++) {
        const mica__tb_input_t *first = &c->inputs[c->group[0] * m->nb_inputs + i];
        const char *name = m->inputs[i].name;
        mica_dims_t dims = first->dims;
        size_t bytes = 0, at = 0;

        if (m->max_batch > 0)
            dims.d[0] = c->total;
        if (c->k == 1 && first->nb_buffers == 1) {
            const void *buf;
            uint64_t size;
            TRITONSERVER_MemoryType type = engine_type(in);
            int64_t id = in->device_id < 0 ? 0 : in->device_id;
            if ((err = TRITONBACKEND_InputBuffer(first->input, 0, &buf, &size,
                                                 &type, &id)))
                return err;
            if (engine_memory(in, type, id, buf)) {
                /* The engine reads inputs, never writes them. */
                if ((st = mica_exec_bind(in->exec, name, &dims, (void *)buf)))
                    goto mica_failed;
                in->bound[i] = 1;
                continue;
            }
        }
        for (g = 0; g < c->k; g++)
            bytes += c->inputs[c->group[g] * m->nb_inputs + i].bytes;
        if (bytes > in->stage_cap[i]) {
            void *grown = realloc(in->stage[i], bytes);
            if (!grown)
                return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of "
                                      "memory for %zu bytes of input", bytes);
            in->stage[i] = grown;
            in->stage_cap[i] = bytes;
        }
        for (g = 0; g < c->k; g++) {
            const mica__tb_input_t *x = &c->inputs[c->group[g] * m->nb_inputs + i];
            if ((err = mica__tb_input_copy(x, (char *)in->stage[i] + at,
                                           TRITONSERVER_MEMORY_CPU)))
                return err;
            at += x->bytes;
        }
        if ((st = mica_exec_set_input(in->exec, name, &dims, in->stage[i])))
            goto mica_failed;
    }
    return NULL;
mica_failed:
    return mica__tb_mica_error(in->ctx, st, "model '%s'", m->name);
}

/* The admitting profile with the smallest maximum batch, or -1. */
static int32_t pick_profile(const call_t *c)
{
    const mica_engine_t *e = c->in->engine;
    int32_t np = mica_engine_nb_profiles(e), best = -1, k, i, d, nv;
    int64_t best_max = 0, max0 = 0;
    const int32_t *va, *vb, *vc;

    for (k = 0; k < np; k++) {
        int admits = 1;
        for (i = 0; admits && i < c->m->nb_inputs; i++) {
            mica_dims_t lo, opt, hi;
            mica_dims_t dims = c->inputs[c->group[0] * c->m->nb_inputs + i].dims;
            if (c->m->max_batch > 0)
                dims.d[0] = c->total;
            mica_engine_profile_input(e, k, i, &lo, &opt, &hi, &nv, &va, &vb,
                                      &vc);
            for (d = 0; admits && d < dims.nb_dims; d++)
                admits = dims.d[d] >= lo.d[d] && dims.d[d] <= hi.d[d];
            if (i == 0)
                max0 = hi.nb_dims > 0 ? hi.d[0] : 0;
        }
        if (admits && (best < 0 || (c->m->max_batch > 0 && max0 < best_max))) {
            best = k;
            best_max = max0;
        }
    }
    return best;
}

/* Each request's response and outputs; outputs that a group of one can
 * take in place are bound to the response's buffers. */
static TRITONSERVER_Error *prepare_outputs(call_t *c)
{
    mica__tb_instance_t *in = c->in;
    const mica__tb_model_t *m = c->m;
    int32_t ni = m->nb_inputs, no = m->nb_outputs, j, d;
    TRITONSERVER_Error *err;
    mica_status_t st;
    uint32_t g;

    for (g = 0; g < c->k; g++) {
        pending_t *p = &c->p[c->group[g]];
        if ((err = TRITONBACKEND_ResponseNew(&p->response, p->request)))
            return err;
    }
    for (j = 0; j < no; j++) {
        const mica__tb_io_t *io = &m->outputs[j];
        mica_dims_t dims;
        int64_t shape[MICA_MAX_DIMS];
        size_t size = mica_dtype_size(io->dtype);

        if ((st = mica_exec_tensor_dims(in->exec, io->name, &dims)))
            return mica__tb_mica_error(in->ctx, st, "model '%s'", m->name);
        if (m->max_batch > 0 && (dims.nb_dims < 1 || dims.d[0] != c->total))
            return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': "
                                  "output '%s' has %lld rows for a batch of "
                                  "%lld", m->name, io->name,
                                  (long long)(dims.nb_dims ? dims.d[0] : 0),
                                  (long long)c->total);
        for (d = 0; d < dims.nb_dims; d++)
            shape[d] = dims.d[d];
        for (g = 0; g < c->k; g++) {
            uint32_t r = c->group[g];
            pending_t *p = &c->p[r];
            TRITONBACKEND_Output *out;
            TRITONSERVER_MemoryType type = engine_type(in);
            int64_t id = in->device_id < 0 ? 0 : in->device_id, n;
            void *buf;

            if (!c->wants[r * no + j])
                continue;
            if (m->max_batch > 0)
                shape[0] = p->batch;
            for (n = 1, d = 0; d < dims.nb_dims; d++)
                n *= shape[d];
            if ((err = TRITONBACKEND_ResponseOutput(
                     p->response, &out, io->name,
                     mica__tb_dtype_triton(io->dtype), shape,
                     (uint32_t)dims.nb_dims)) ||
                (err = TRITONBACKEND_OutputBuffer(out, &buf,
                                                  (uint64_t)n * size, &type,
                                                  &id)))
                return err;
            c->obuf[r * no + j] = buf;
            c->otype[r * no + j] = type;
            if (c->k == 1 && n > 0 && engine_memory(in, type, id, buf)) {
                if ((st = mica_exec_bind(in->exec, io->name, NULL, buf)))
                    return mica__tb_mica_error(in->ctx, st, "model '%s'",
                                               m->name);
                in->bound[ni + j] = 1;
            }
        }
    }
    return NULL;
}

/* Copy the outputs that were not bound into the responses' buffers. */
static TRITONSERVER_Error *copy_outputs(call_t *c)
{
    mica__tb_instance_t *in = c->in;
    const mica__tb_model_t *m = c->m;
    int32_t ni = m->nb_inputs, no = m->nb_outputs, j;
    TRITONSERVER_Error *err;
    mica_status_t st;
    uint32_t g;

    for (j = 0; j < no; j++) {
        const char *name = m->outputs[j].name;
        mica_tensor_desc_t desc;
        const void *data;
        size_t row, at = 0;

        if (in->bound[ni + j])
            continue;
        if ((st = mica_exec_get_output(in->exec, name, &desc, &data)))
            return mica__tb_mica_error(in->ctx, st, "model '%s'", m->name);
        row = (size_t)mica_dims_volume(&desc.dims) * mica_dtype_size(desc.dtype);
        if (m->max_batch > 0)
            row /= (size_t)c->total;
        for (g = 0; g < c->k; g++) {
            uint32_t r = c->group[g];
            size_t bytes = row * (size_t)c->p[r].batch;
            if (c->wants[r * no + j] && bytes &&
                (err = mica__tb_copy(c->obuf[r * no + j], c->otype[r * no + j],
                                     (const char *)data + at,
                                     TRITONSERVER_MEMORY_CPU, bytes)))
                return err;
            at += bytes;
        }
    }
    return NULL;
}

/* Unbind what this group bound to the requests' memory. */
static void unbind(call_t *c)
{
    const mica__tb_model_t *m = c->m;
    int32_t i;
    for (i = 0; i < m->nb_inputs + m->nb_outputs; i++) {
        if (!c->in->bound[i])
            continue;
        mica_exec_bind(c->in->exec, i < m->nb_inputs ? m->inputs[i].name
                                     : m->outputs[i - m->nb_inputs].name,
                       NULL, NULL);
        c->in->bound[i] = 0;
    }
}

/* Answer, account and release request r. */
static void finish(call_t *c, uint32_t r, uint64_t exec_start)
{
    pending_t *p = &c->p[r];
    TRITONSERVER_Error *err;

    if (p->error) {
        if (p->response)
            mica__tb_log_error(TRITONBACKEND_ResponseDelete(p->response),
                               "deleting a response");
        p->response = NULL;
        err = TRITONBACKEND_ResponseNew(&p->response, p->request);
        if (err)
            mica__tb_log_error(err, "a response for a failed request");
        else
            mica__tb_log_error(TRITONBACKEND_ResponseSend(
                                   p->response,
                                   TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                                   p->error),
                               "sending an error");
    } else {
        mica__tb_log_error(TRITONBACKEND_ResponseSetStringParameter(
                               p->response, "mica_instance", c->in->name),
                           "a response parameter");
        mica__tb_log_error(TRITONBACKEND_ResponseSend(
                               p->response,
                               TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL),
                           "sending a response");
    }
    if (!p->compute_start)
        p->compute_start = p->compute_end = mica__tb_now_ns();
    mica__tb_log_error(TRITONBACKEND_ModelInstanceReportStatistics(
                           c->in->triton, p->request, p->error == NULL,
                           exec_start, p->compute_start, p->compute_end,
                           mica__tb_now_ns()),
                       "reporting statistics");
    mica__tb_log_error(TRITONBACKEND_RequestRelease(
                           p->request, TRITONSERVER_REQUEST_RELEASE_ALL),
                       "releasing a request");
    if (p->error)
        TRITONSERVER_ErrorDelete(p->error);
    p->error = NULL;
    p->request = NULL;
}

/* Run the group and answer it. */
static void run_group(call_t *c, uint64_t exec_start)
{
    mica__tb_instance_t *in = c->in;
    TRITONSERVER_Error *err;
    mica_status_t st;
    uint64_t t0, t1;
    uint32_t g;

    if ((err = set_inputs(c)))
        goto failed;
    if (mica_exec_set_profile(in->exec, pick_profile(c)) != MICA_OK ||
        (err = prepare_outputs(c)))
        goto failed;
    t0 = mica__tb_now_ns();
    st = mica_exec_run(in->exec);
    t1 = mica__tb_now_ns();
    if (st != MICA_OK) {
        err = mica__tb_mica_error(in->ctx, st, "model '%s'", c->m->name);
        goto failed;
    }
    if ((err = copy_outputs(c)))
        goto failed;
    unbind(c);
    for (g = 0; g < c->k; g++) {
        c->p[c->group[g]].compute_start = t0;
        c->p[c->group[g]].compute_end = t1;
        finish(c, c->group[g], exec_start);
    }
    mica__tb_log_error(TRITONBACKEND_ModelInstanceReportBatchStatistics(
                           in->triton, (uint64_t)c->total, exec_start, t0, t1,
                           mica__tb_now_ns()),
                       "reporting batch statistics");
    return;
failed:
    unbind(c);
    if (!err)
        err = mica__tb_mica_error(in->ctx, MICA_ERR_INVALID, "model '%s'",
                                  c->m->name);
    fail_group(c, err);
}

/* Whether request r can join the group: same non-batch dims, room. */
static int fits(const call_t *c, uint32_t r)
{
    const mica__tb_model_t *m = c->m;
    int32_t i, d;
    if (m->max_batch == 0 || c->total + c->p[r].batch > m->max_batch)
        return 0;
    for (i = 0; i < m->nb_inputs; i++) {
        const mica_dims_t *a = &c->inputs[c->group[0] * m->nb_inputs + i].dims;
        const mica_dims_t *b = &c->inputs[r * m->nb_inputs + i].dims;
        for (d = 1; d < a->nb_dims; d++)
            if (a->d[d] != b->d[d])
                return 0;
    }
    return 1;
}

/* Which outputs request r asks for. */
static TRITONSERVER_Error *wanted(call_t *c, uint32_t r)
{
    const mica__tb_model_t *m = c->m;
    TRITONSERVER_Error *err;
    uint32_t count, k;
    const char *name;
    int32_t j;

    if ((err = TRITONBACKEND_RequestOutputCount(c->p[r].request, &count)))
        return err;
    for (k = 0; k < count; k++) {
        if ((err = TRITONBACKEND_RequestOutputName(c->p[r].request, k, &name)))
            return err;
        for (j = 0; j < m->nb_outputs; j++)
            if (strcmp(m->outputs[j].name, name) == 0)
                c->wants[r * m->nb_outputs + j] = 1;
    }
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *triton, TRITONBACKEND_Request **requests,
    const uint32_t n)
{
    uint64_t exec_start = mica__tb_now_ns();
    TRITONSERVER_Error *err;
    void *state;
    call_t c;
    size_t ni, no;
    uint32_t r, s;

    if ((err = TRITONBACKEND_ModelInstanceState(triton, &state)) || n == 0)
        return err;
    memset(&c, 0, sizeof c);
    c.in = state;
    c.m = c.in->model;
    c.n = n;
    ni = (size_t)c.m->nb_inputs;
    no = (size_t)c.m->nb_outputs;
    c.p = calloc(n, sizeof *c.p);
    c.inputs = calloc(n * ni, sizeof *c.inputs);
    c.wants = calloc(n * no, 1);
    c.obuf = calloc(n * no, sizeof *c.obuf);
    c.otype = calloc(n * no, sizeof *c.otype);
    c.group = calloc(n, sizeof *c.group);
    if (!c.p || !c.inputs || !c.wants || !c.obuf || !c.otype || !c.group) {
        /* Nothing answered yet: the server answers them all. */
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': out "
                             "of memory for %u requests", c.m->name, n);
        goto done;
    }
    err = mica__tb_set_device(c.in->device_id);
    for (r = 0; r < n; r++) {
        bool cancelled = false;
        c.p[r].request = requests[r];
        if (err)
            c.p[r].error = TRITONSERVER_ErrorNew(TRITONSERVER_ErrorCode(err),
                                                 TRITONSERVER_ErrorMessage(err));
        else if ((c.p[r].error = TRITONBACKEND_RequestIsCancelled(
                      requests[r], &cancelled)) != NULL)
            ; /* answered with that error */
        else if (cancelled)
            /* The client went away: nothing runs for it. */
            c.p[r].error = mica__tb_error(TRITONSERVER_ERROR_CANCELLED,
                                          "model '%s': the request was "
                                          "cancelled before it ran",
                                          c.m->name);
        else if (!(c.p[r].error = mica__tb_request_check(
                       c.m, requests[r], &c.inputs[r * ni], &c.p[r].batch)))
            c.p[r].error = wanted(&c, r);
    }
    if (err)
        TRITONSERVER_ErrorDelete(err);
    err = NULL;
    for (r = 0; r < n; r++) {
        if (c.p[r].error || c.p[r].grouped)
            continue;
        c.k = 0;
        c.group[c.k++] = r;
        c.total = c.p[r].batch;
        c.p[r].grouped = 1;
        for (s = r + 1; s < n; s++)
            if (!c.p[s].error && !c.p[s].grouped && fits(&c, s)) {
                c.group[c.k++] = s;
                c.total += c.p[s].batch;
                c.p[s].grouped = 1;
            }
        run_group(&c, exec_start);
    }
    for (r = 0; r < n; r++)
        if (c.p[r].request)
            finish(&c, r, exec_start);
done:
    free(c.p);
    free(c.inputs);
    free(c.wants);
    free(c.obuf);
    free(c.otype);
    free(c.group);
    return err;
}
