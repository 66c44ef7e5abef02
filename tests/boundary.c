/*
 * tests/boundary.c - calling boundary layers directly, for the loop and
 * conditional module tests: an instance from checked fields, one step (or
 * the ordinary enqueue) on the CPU or on CUDA with host tensors copied
 * there and back, and output shapes from constant expressions.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "boundary.h"
#include "mica_int.h"


mica_expr_builder_t *tb_eb;
char tb_why[TB_WHY_MAX];
int tb_alias_next; /* step(): input 1 is output 0's memory */

/* ---- calling the layers --------------------------------------------------- */

/* An instance of `type` on `dev` from checked fields; NULL, why set. */
mica_layer_t *tb_make(const char *type, uint32_t dev, th_fields_t *f)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica__fields_t checked;
    mica_error_t err;
    mica_layer_t *l = NULL;

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    memset(&checked, 0, sizeof checked);
    if (mica_registry_find(th_context(), NULL, type, 0,
                           dev == MICA_DEVICE_CUDA ? "cuda" : "reference", dev,
                           &info) != MICA_OK) {
        snprintf(tb_why, sizeof tb_why, "%s", mica_context_error(th_context()));
    } else if (mica__fields_check(info.creator, th_fields_view(f), &checked,
                                  tb_why, sizeof tb_why) == MICA_OK) {
        mica__error_clear(&err);
        l = info.creator->create(info.creator, type, &checked.view, &err);
        if (!l)
            snprintf(tb_why, sizeof tb_why, "%s",
                     mica__error_msg(&err, "create failed"));
        mica__fields_free(&checked);
    }
    th_fields_free(f);
    return l;
}

static mica_tensor_desc_t tb_desc(const th_tensor_t *t)
{
    mica_tensor_desc_t d;
    memset(&d, 0, sizeof d);
    d.dtype = t->dtype;
    d.format = MICA_FORMAT_LINEAR;
    d.dims = t->dims;
    d.scale = 1.0f;
    return d;
}

size_t tb_bytes_of(const th_tensor_t *t)
{
    return (size_t)th_volume(t) * mica_dtype_size(t->dtype);
}

#ifdef MICA_HAVE_CUDA
static cudaStream_t tb_stream;

static void *tb_upload(const th_tensor_t *t)
{
    void *p;
    size_t n = tb_bytes_of(t);
    if (cudaMalloc(&p, n ? n : 1) != cudaSuccess ||
        cudaMemcpy(p, t->data, n, cudaMemcpyHostToDevice) != cudaSuccess)
        bail("cannot copy %zu bytes to the GPU", n);
    return p;
}
#endif

/*
 * Run step `s` on l (on `dev`; s NULL: the ordinary enqueue) with host
 * tensors in[] (shape-tensor inputs stay on the host) and out[] (read and
 * written back).  Returns the status; why holds the message.
 */
mica_status_t tb_step(mica_layer_t *l, uint32_t dev, mica_step_t *s,
                          int nb_in, th_tensor_t *in, int nb_out,
                          th_tensor_t *out)
{
    mica_tensor_desc_t d[8];
    const void *ip[4];
    void *op[4];
    void *strm = NULL;
    mica_error_t err;
    mica_status_t st;
    int i;

    for (i = 0; i < nb_in; i++) {
        d[i] = tb_desc(&in[i]);
        ip[i] = in[i].data;
    }
    for (i = 0; i < nb_out; i++) {
        d[nb_in + i] = tb_desc(&out[i]);
        op[i] = out[i].data;
    }
#ifdef MICA_HAVE_CUDA
    if (dev == MICA_DEVICE_CUDA) {
        if (!tb_stream && cudaStreamCreate(&tb_stream) != cudaSuccess)
            bail("cannot create a CUDA stream");
        strm = tb_stream;
        for (i = 0; i < nb_in; i++)
            if (!in[i].is_shape && !(tb_alias_next && i == 1))
                ip[i] = tb_upload(&in[i]);
        for (i = 0; i < nb_out; i++)
            op[i] = tb_upload(&out[i]);
    }
#endif
    if (tb_alias_next)
        ip[1] = op[0];
    mica__error_clear(&err);
    if (s)
        st = l->ops->enqueue_boundary(l, s, d, nb_in, d + nb_in, nb_out, ip,
                                      op, NULL, strm, &err);
    else
        st = l->ops->enqueue(l, d, nb_in, d + nb_in, nb_out, ip, op, NULL,
                             strm, &err);
    snprintf(tb_why, sizeof tb_why, "%s", mica__error_msg(&err, "no message"));
#ifdef MICA_HAVE_CUDA
    if (dev == MICA_DEVICE_CUDA) {
        if (cudaStreamSynchronize(tb_stream) != cudaSuccess)
            bail("the CUDA stream failed");
        for (i = 0; i < nb_out; i++)
            if (cudaMemcpy(out[i].data, op[i], tb_bytes_of(&out[i]),
                           cudaMemcpyDeviceToHost) != cudaSuccess)
                bail("cannot copy back from the GPU");
        for (i = 0; i < nb_in; i++)
            if (!in[i].is_shape && !(tb_alias_next && i == 1))
                cudaFree((void *)ip[i]);
        for (i = 0; i < nb_out; i++)
            cudaFree(op[i]);
    }
#else
    (void)dev;
#endif
    return st;
}

mica_step_t tb_mkstep(mica_step_kind_t kind, int64_t i, int64_t trips)
{
    mica_step_t s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.kind = kind;
    s.iteration = i;
    s.trip_count = trips;
    return s;
}

/* Shapes of in[] as constant expressions (values too, for shape tensors). */
void tb_shapes(int nb_in, const th_tensor_t *in, mica_shape_expr_t *se,
                   const mica_expr_t *vals[][4])
{
    int i, k;
    for (i = 0; i < nb_in; i++) {
        memset(&se[i], 0, sizeof se[i]);
        if (!in[i].data) {
            se[i].nb_dims = -1;
            continue;
        }
        se[i].nb_dims = in[i].dims.nb_dims;
        for (k = 0; k < in[i].dims.nb_dims; k++)
            se[i].d[k] = mica__expr_constant(tb_eb, in[i].dims.d[k]);
        if (in[i].is_shape) {
            se[i].nb_values = (int32_t)th_volume(&in[i]);
            for (k = 0; k < se[i].nb_values && k < 4; k++)
                vals[i][k] = mica__expr_constant(tb_eb, (int64_t)th_get(&in[i],
                                                                     k));
            se[i].values = vals[i];
        }
    }
}

/* Output 0's dims from output_dims on constant shapes; why on failure. */
mica_status_t tb_out_dims(mica_layer_t *l, int nb_in,
                              const th_tensor_t *in, mica_dims_t *dims)
{
    mica_shape_expr_t se[4], o;
    const mica_expr_t *vals[4][4];
    mica_error_t err;
    mica_status_t st;
    int k;

    tb_shapes(nb_in, in, se, vals);
    memset(&o, 0, sizeof o);
    mica__error_clear(&err);
    st = l->ops->output_dims(l, 0, se, nb_in, tb_eb, &o, &err);
    if (st != MICA_OK) {
        snprintf(tb_why, sizeof tb_why, "%s", mica__error_msg(&err, "no message"));
        return st;
    }
    dims->nb_dims = o.nb_dims;
    for (k = 0; k < o.nb_dims; k++) {
        if (!mica__expr_is_constant(o.d[k])) {
            snprintf(tb_why, sizeof tb_why, "dimension %d is not constant", k);
            return MICA_ERR_INVALID;
        }
        dims->d[k] = mica__expr_constant_value(o.d[k]);
    }
    return MICA_OK;
}

void tb_init(void)
{
    if (mica__expr_builder_create(&tb_eb) != MICA_OK)
        bail("no expression builder");
}

void tb_fini(void)
{
#ifdef MICA_HAVE_CUDA
    if (tb_stream)
        cudaStreamDestroy(tb_stream);
#endif
    mica__expr_builder_destroy(tb_eb);
}

th_tensor_t tb_failed(mica_layer_t *l)
{
    th_tensor_t t = th_none();
    if (l)
        l->ops->destroy(l);
    return t;
}

void tb_check_cpu(const char *label, const th_tensor_t *want,
                      const th_tensor_t *got)
{
    char w[256];
    if (!got->data)
        ok(0, "%s: cpu: %s", label, tb_why);
    else if (!th_same(want, got, 0, 0, w, sizeof w))
        ok(0, "%s: cpu: %s", label, w);
    else
        ok(1, "%s: cpu", label);
}

void tb_check_gpu(const char *label, const th_tensor_t *cpu,
                      const th_tensor_t *gpu)
{
    char w[256];
    if (!gpu->data)
        ok(0, "%s: cuda: %s", label, tb_why);
    else if (!cpu->data || !th_same(cpu, gpu, 0, 0, w, sizeof w))
        ok(0, "%s: cuda against cpu: %s", label, cpu->data ? w : "no cpu");
    else
        ok(!memcmp(cpu->data, gpu->data, tb_bytes_of(cpu)),
           "%s: cuda = cpu bit for bit", label);
}

int tb_formats(mica_layer_t *l, int pos, int nb_in, int nb_out,
               const mica_dtype_t *types)
{
    mica_tensor_desc_t io[4];
    int i;
    memset(io, 0, sizeof io);
    for (i = 0; i < nb_in + nb_out; i++) {
        io[i].dtype = types[i];
        io[i].format = MICA_FORMAT_LINEAR;
    }
    return l->ops->supports_format(l, pos, io, nb_in, nb_out);
}

mica_status_t tb_dtypes(mica_layer_t *l, int nb_in, const mica_dtype_t *in,
                        int nb_out, mica_dtype_t *out)
{
    mica_error_t err;
    mica_status_t st;
    mica__error_clear(&err);
    st = l->ops->output_dtypes(l, in, nb_in, out, nb_out, &err);
    snprintf(tb_why, sizeof tb_why, "%s", mica__error_msg(&err, "no message"));
    return st;
}
