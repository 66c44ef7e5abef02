/*
 * tests/test_triton_backend.c - libtriton_mica's entry points driven by a
 * test double of the server (tests/triton/fake_triton.c): models loaded
 * and completed, instances, batches of requests run together on the
 * right profile, outputs against the same manifest run through mica's
 * API, a bad request answered alone, statistics, the messages of bad
 * models; and, on a CUDA build with a usable GPU, a KIND_GPU instance fed
 * from host and device memory (bound in place, gathered, copied out).
 * tests/test_triton.sh does the same through a real tritonserver where
 * one is installed; this one needs none.
 */
#include <config.h>

#include "backend.h"
#include "fake_triton.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define IN 3
#define OUT 2

static const char *manifest =
    "mica: 1\n"
    "inputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
    "profiles:\n"
    "  - x: {min: [1, 3], opt: [2, 3], max: [4, 3]}\n"
    "  - x: {min: [5, 3], opt: [8, 3], max: [16, 3]}\n"
    "weights:\n  w: {dtype: float32, shape: [3, 2], data: [1, -1, 2, 0.5, -3, 1]}\n"
    "layers:\n"
    "  - {name: relu, type: Activation, inputs: [x], outputs: [r],"
    " params: {type: relu}}\n"
    "  - {name: w, type: Constant, outputs: [w], params: {weights: w}}\n"
    "  - {name: mm, type: MatrixMultiply, inputs: [r, w], outputs: [y]}\n"
    "  - {name: sum, type: Reduce, inputs: [y], outputs: [s],"
    " params: {op: sum, axes: [1], keep_dims: true}}\n"
    "outputs: [y, s]\n";

static char dir[256];
static TRITONBACKEND_Backend backend = {
    "{\"cmdline\":{\"default-max-batch-size\":\"4\",\"max-batch-size\":\"8\"}}", {NULL, 0}, NULL,
    TRITONSERVER_INSTANCEGROUPKIND_AUTO, 0};
static float xs[64 * IN];            /* request rows */
static float want_y[64 * OUT], want_s[64];

/* ---- setup ----------------------------------------------------------------- */

static void write_model(const char *name)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/1", dir, name);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/1/model.yaml", dir, name);
    if (!(f = fopen(path, "w")))
        bail("cannot write %s", path);
    fputs(manifest, f);
    fclose(f);
}

/* want_y, want_s for the rows of xs, by mica's API on the manifest. */
static void reference(int rows)
{
    char path[512];
    mica_context_t *ctx;
    mica_manifest_t *m;
    mica_engine_t *e;
    mica_exec_t *x;
    mica_dims_t dims = {2, 0, {rows, IN}};
    mica_tensor_desc_t desc;
    const void *y, *s;

    snprintf(path, sizeof path, "%s/mlp/1/model.yaml", dir);
    if (mica_context_create(&ctx) || mica_context_load_default_modules(ctx) ||
        mica_manifest_load(ctx, path, &m) ||
        mica_engine_build(mica_manifest_network(m), NULL, &e) ||
        mica_exec_create(e, &x) || mica_exec_set_input(x, "x", &dims, xs) ||
        mica_exec_run(x) || mica_exec_get_output(x, "y", &desc, &y) ||
        mica_exec_get_output(x, "s", &desc, &s))
        bail("reference: %s", mica_context_error(ctx));
    memcpy(want_y, y, sizeof(float) * (size_t)rows * OUT);
    memcpy(want_s, s, sizeof(float) * (size_t)rows);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
    mica_context_destroy(ctx);
}

/* ---- requests -------------------------------------------------------------- */

/* A request for rows [first, first+rows) of xs, in `pieces` buffers. */
static void request(TRITONBACKEND_Request *r, int first, int rows, int pieces,
                    const void *data, TRITONSERVER_MemoryType type)
{
    TRITONBACKEND_Input *in = &r->inputs[0];
    uint64_t bytes = sizeof(float) * (uint64_t)rows * IN, at = 0;
    int k;

    memset(r, 0, sizeof *r);
    r->nb_inputs = 1;
    in->name = "x";
    in->dtype = TRITONSERVER_TYPE_FP32;
    in->rank = 2;
    in->shape[0] = rows;
    in->shape[1] = IN;
    in->type = type;
    in->nb_buffers = (uint32_t)pieces;
    for (k = 0; k < pieces; k++) {
        uint64_t n = k == pieces - 1 ? bytes - at : bytes / (uint64_t)pieces;
        in->buffer[k] = (const char *)(data ? data : xs + first * IN) + at;
        in->size[k] = n;
        at += n;
    }
    r->nb_outputs = 2;
    r->outputs[0] = "y";
    r->outputs[1] = "s";
}

/* Output `name` of r's response, copied to host, or NULL. */
static const float *output(TRITONBACKEND_Request *r, const char *name)
{
    static float host[64 * OUT];
    uint32_t k;
    TRITONBACKEND_Response *resp = r->response;

    for (k = 0; resp && k < resp->nb_outputs; k++) {
        TRITONBACKEND_Output *o = &resp->outputs[k];
        if (strcmp(o->name, name) != 0 || o->bytes > sizeof host)
            continue;
#ifdef MICA_HAVE_CUDA
        if (o->type == TRITONSERVER_MEMORY_GPU) {
            if (cudaMemcpy(host, o->buffer, o->bytes, cudaMemcpyDeviceToHost))
                return NULL;
            return host;
        }
#endif
        memcpy(host, o->buffer, o->bytes);
        return host;
    }
    return NULL;
}

/* Whether r was answered once, released, and its outputs are rows
 * [first, first+rows) of the reference (only s if `only_s`). */
static int right(TRITONBACKEND_Request *r, int first, int rows, int only_s)
{
    const float *y = output(r, "y"), *s;
    int k, good = r->released && r->responses == 1 && r->response &&
                  !r->response->error;

    if (!good) {
        diag("released %d, responses %d, error %s", r->released, r->responses,
             r->response && r->response->error ? r->response->error : "none");
        return 0;
    }
    if (only_s ? y != NULL : !y)
        return 0;
    for (k = 0; y && k < rows * OUT; k++)
        good &= fabsf(y[k] - want_y[first * OUT + k]) <= 1e-5f;
    s = output(r, "s");
    for (k = 0; s && k < rows; k++)
        good &= fabsf(s[k] - want_s[first + k]) <= 1e-5f;
    return good && s;
}

static const char *error_of(TRITONBACKEND_Request *r)
{
    return r->released && r->response && r->response->error
               ? r->response->error : "(no error response)";
}

static void execute(TRITONBACKEND_ModelInstance *inst,
                    TRITONBACKEND_Request *rs, uint32_t n)
{
    TRITONBACKEND_Request *p[FAKE_MAX];
    TRITONSERVER_Error *err;
    uint32_t k;
    for (k = 0; k < n; k++)
        p[k] = &rs[k];
    if ((err = TRITONBACKEND_ModelInstanceExecute(inst, p, n))) {
        ok(0, "execute returns NULL (owns the requests)");
        diag("%s", TRITONSERVER_ErrorMessage(err));
        TRITONSERVER_ErrorDelete(err);
    }
}

static void free_responses(TRITONBACKEND_Request *rs, int n)
{
    int k;
    for (k = 0; k < n; k++) {
        fake_response_free(rs[k].response);
        rs[k].response = NULL;
    }
}

/* Load a model; the error message (NULL: loaded). */
static char *load(TRITONBACKEND_Model *m, const char *name, const char *config)
{
    static char msg[1024];
    char repo[512];
    TRITONSERVER_Error *err;

    memset(m, 0, sizeof *m);
    snprintf(repo, sizeof repo, "%s/%s", dir, name);
    m->backend = &backend;
    m->name = name;
    m->version = 1;
    m->repository = strdup(repo);
    m->config = config;
    m->auto_complete = true;
    if (!(err = TRITONBACKEND_ModelInitialize(m)))
        return NULL;
    snprintf(msg, sizeof msg, "%s", TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
    free((char *)m->repository);
    free(m->set_config);
    return msg;
}

static void unload(TRITONBACKEND_Model *m)
{
    TRITONSERVER_Error *err = TRITONBACKEND_ModelFinalize(m);
    ok(!err, "model '%s' finalized", m->name);
    TRITONSERVER_ErrorDelete(err);
    free((char *)m->repository);
    free(m->set_config);
}

static int start(TRITONBACKEND_ModelInstance *i, TRITONBACKEND_Model *m,
                 const char *name, TRITONSERVER_InstanceGroupKind kind)
{
    TRITONSERVER_Error *err;
    memset(i, 0, sizeof *i);
    i->model = m;
    i->name = name;
    i->kind = kind;
    if (!(err = TRITONBACKEND_ModelInstanceInitialize(i)))
        return 1;
    diag("%s: %s", name, TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
    return 0;
}

static void stop(TRITONBACKEND_ModelInstance *i)
{
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceFinalize(i);
    ok(!err, "instance '%s' finalized", i->name);
    TRITONSERVER_ErrorDelete(err);
}

/* ---- the cases ------------------------------------------------------------- */

/* A KIND_CPU instance of the auto-completed batching model. */
static void cpu(TRITONBACKEND_Model *m)
{
    TRITONBACKEND_ModelInstance inst;
    TRITONBACKEND_Request rs[6];

    ok(start(&inst, m, "mlp_0_0", TRITONSERVER_INSTANCEGROUPKIND_CPU),
       "a KIND_CPU instance starts");

    /* A batch of four: 2 + 1 (in two buffers) + a bad one + 3 (only s). */
    request(&rs[0], 0, 2, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 2, 1, 2, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[2], 3, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[2].inputs[0].dtype = TRITONSERVER_TYPE_FP64;
    request(&rs[3], 3, 3, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[3].nb_outputs = 1;
    rs[3].outputs[0] = "s";
    execute(&inst, rs, 4);
    ok(right(&rs[0], 0, 2, 0), "batched request of 2 rows: y and s right");
    ok(right(&rs[1], 2, 1, 0), "batched request in two buffers: right");
    is_string("model 'mlp': input 'x' is FP64 but the model takes FP32",
              error_of(&rs[2]), "a bad request of the batch: its own error");
    ok(right(&rs[3], 3, 3, 1), "batched request asking for s alone: s only");
    is_string("mica_instance=mlp_0_0", rs[0].response->param,
              "the response names the instance");
    is_int(4, inst.stats.requests, "statistics for each request");
    is_int(1, inst.stats.failed, "... one of them failed");
    is_int(1, inst.stats.batches, "one batch ran");
    is_int(6, (int64_t)inst.stats.largest, "of 6 rows (the second profile)");
    free_responses(rs, 4);

    /* Alone (bound in place), then a batch: no binding left behind. */
    request(&rs[0], 0, 4, 1, NULL, TRITONSERVER_MEMORY_CPU);
    execute(&inst, rs, 1);
    ok(right(&rs[0], 0, 4, 0), "a request alone (bound in place): right");
    free_responses(rs, 1);
    request(&rs[0], 4, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 5, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    execute(&inst, rs, 2);
    ok(right(&rs[0], 4, 1, 0) && right(&rs[1], 5, 1, 0),
       "then two batched: right");
    free_responses(rs, 2);

    /* Bad requests, one per call. */
    request(&rs[0], 0, 9, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 0, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[1].nb_inputs = 2;
    rs[1].inputs[1] = rs[1].inputs[0];
    rs[1].inputs[1].name = "z";
    request(&rs[2], 0, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[2].inputs[0].shape[1] = 4;
    request(&rs[3], 0, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[3].inputs[0].size[0] = 8;
    request(&rs[4], 0, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[4].outputs[1] = "nope";
    request(&rs[5], 0, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    execute(&inst, rs, 6);
    is_string("model 'mlp': input 'x' has a batch of 9; the model takes 1 to "
              "8", error_of(&rs[0]), "refused: a batch above max_batch_size");
    is_string("model 'mlp': the request gives input 'z', which the model does "
              "not have", error_of(&rs[1]), "refused: an unknown input");
    is_string("model 'mlp': input 'x' has shape [1, 4] but the model takes "
              "[-1, 3] (-1: any; the first is the batch)", error_of(&rs[2]),
              "refused: a wrong shape");
    is_string("model 'mlp': input 'x' of shape [1, 3] holds 8 bytes, not 12",
              error_of(&rs[3]), "refused: a short buffer");
    is_string("model 'mlp': the request asks for output 'nope', which the "
              "model does not have", error_of(&rs[4]),
              "refused: an unknown output");
    ok(right(&rs[5], 0, 1, 0), "the good request among them is answered");
    free_responses(rs, 6);

    /* A request its client cancelled: answered CANCELLED, not run. */
    request(&rs[0], 0, 2, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 2, 1, 1, NULL, TRITONSERVER_MEMORY_CPU);
    rs[0].cancelled = 1;
    execute(&inst, rs, 2);
    is_string("model 'mlp': the request was cancelled before it ran",
              error_of(&rs[0]), "a cancelled request: its own error");
    ok(rs[0].response && rs[0].response->code == TRITONSERVER_ERROR_CANCELLED,
       "  of code CANCELLED");
    ok(right(&rs[1], 2, 1, 0), "  the other request of the call runs");
    free_responses(rs, 2);
    stop(&inst);
}

/* Whole tensors (max_batch_size 0): the profiles bound the rows. */
static void whole(void)
{
    TRITONBACKEND_Model m;
    TRITONBACKEND_ModelInstance inst;
    TRITONBACKEND_Request rs[2];
    char *err = load(&m, "full", "{\"max_batch_size\":0,\"input\":[{\"name\":"
                     "\"x\",\"data_type\":\"TYPE_FP32\",\"dims\":[-1,3]}]}");

    ok(!err, "a model of whole tensors loads");
    if (err) {
        diag("%s", err);
        return;
    }
    contains(m.set_config, "{\"name\":\"s\",\"data_type\":\"TYPE_FP32\","
             "\"dims\":[-1,1]}", "its outputs are completed with the batch "
             "dimension");
    ok(start(&inst, &m, "full_0_0", TRITONSERVER_INSTANCEGROUPKIND_CPU),
       "its instance starts");
    request(&rs[0], 0, 12, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 0, 17, 1, NULL, TRITONSERVER_MEMORY_CPU);
    execute(&inst, rs, 2);
    ok(right(&rs[0], 0, 12, 0), "12 rows in one request: right");
    contains(error_of(&rs[1]), "no profile admits the inputs",
             "17 rows: refused by the engine's profiles");
    is_int(2, inst.stats.requests, "statistics for both requests");
    is_int(1, inst.stats.batches, "one batch: each request runs alone, and "
           "the refused one is in none");
    free_responses(rs, 2);
    stop(&inst);
    unload(&m);
}

/* Models that cannot load say why. */
static void bad_models(void)
{
    TRITONBACKEND_Model m;
    char want[600];

    is_string("model 'bad': unknown parameter 'precison' (the mica backend "
              "takes file, device, precision, prefer, threads, and shapes, "
              "min_shapes, "
              "opt_shapes, max_shapes for ONNX)",
              load(&m, "bad", "{\"parameters\":{\"precison\":{"
                   "\"string_value\":\"float16\"}}}"),
              "a misspelt parameter");
    is_string("model 'bad': parameter device is 'gpu'; it takes auto, cpu or "
              "cuda", load(&m, "bad", "{\"parameters\":{\"device\":{"
                           "\"string_value\":\"gpu\"}}}"),
              "a bad device");
    snprintf(want, sizeof want, "model 'bad': parameter file: no file "
             "'%s/bad/1/nope.yaml'", dir);
    is_string(want, load(&m, "bad", "{\"parameters\":{\"file\":{"
                         "\"string_value\":\"nope.yaml\"}}}"),
              "a missing file");
    is_string("model 'bad': parameter file '../x' must name a file inside "
              "the version folder", load(&m, "bad", "{\"parameters\":{\"file\""
                                         ":{\"string_value\":\"../x\"}}}"),
              "a file outside the version folder");
    snprintf(want, sizeof want, "model 'bad': parameters shapes, "
             "min_shapes, opt_shapes and max_shapes apply to ONNX files; "
             "'%s/bad/1/model.yaml' is not one", dir);
    is_string(want, load(&m, "bad", "{\"parameters\":{\"shapes\":{"
                   "\"string_value\":\"x:2x3\"}}}"),
              "ONNX shapes for a manifest");
    is_string("model 'bad': parameter threads is '0'; it takes a count of "
              "threads from 1 to 4096",
              load(&m, "bad", "{\"parameters\":{\"threads\":{"
                   "\"string_value\":\"0\"}}}"),
              "threads 0");
    is_string("model 'bad': input 'x': allow_ragged_batch is not supported "
              "by the mica backend (batches run along a dimension of equal "
              "rows)",
              load(&m, "bad", "{\"input\":[{\"name\":\"x\","
                   "\"allow_ragged_batch\":true}]}"),
              "allow_ragged_batch refused at load");
    is_string("model 'bad': model_transaction_policy { decoupled: true } is "
              "not supported by the mica backend (one response per request)",
              load(&m, "bad", "{\"model_transaction_policy\":{"
                   "\"decoupled\":true}}"),
              "a decoupled model refused at load");
    is_string("model 'bad': sequence_batching { state } (implicit state) is "
              "not supported by the mica backend",
              load(&m, "bad", "{\"sequence_batching\":{\"state\":[{"
                   "\"input_name\":\"a\"}]}}"),
              "implicit sequence state refused at load");
    is_string("model 'bad': max_batch_size is 20 but the engine's profiles "
              "admit batches 1 to 16 only",
              load(&m, "bad", "{\"max_batch_size\":20}"),
              "a max_batch_size the profiles do not cover");
}

/* A KIND_GPU instance: CUDA memory on both sides (CUDA builds). */
static void gpu(TRITONBACKEND_Model *m)
{
    TRITONBACKEND_ModelInstance inst;
#ifdef MICA_HAVE_CUDA
    TRITONBACKEND_Request rs[2];
    float *dx = NULL;

    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        skip_block(7, "no usable CUDA device");
        return;
    }
    if (!start(&inst, m, "mlp_gpu", TRITONSERVER_INSTANCEGROUPKIND_GPU)) {
        ok(0, "a KIND_GPU instance on device 0 starts");
        return;
    }
    if (cudaMalloc((void **)&dx, sizeof xs) != cudaSuccess ||
        cudaMemcpy(dx, xs, sizeof xs, cudaMemcpyHostToDevice) != cudaSuccess)
        bail("cannot put the inputs on the GPU");

    request(&rs[0], 0, 2, 1, NULL, TRITONSERVER_MEMORY_CPU);
    request(&rs[1], 2, 2, 1, NULL, TRITONSERVER_MEMORY_CPU);
    execute(&inst, rs, 2);
    ok(right(&rs[0], 0, 2, 0) && right(&rs[1], 2, 2, 0),
       "GPU: host inputs, batched: right");
    ok(rs[0].response->outputs[0].type == TRITONSERVER_MEMORY_GPU,
       "GPU: outputs copied into GPU memory");
    free_responses(rs, 2);

    request(&rs[0], 0, 3, 1, dx, TRITONSERVER_MEMORY_GPU);
    execute(&inst, rs, 1);
    ok(right(&rs[0], 0, 3, 0), "GPU: a device input alone (bound in place, "
       "outputs bound): right");
    free_responses(rs, 1);

    request(&rs[0], 0, 2, 1, dx, TRITONSERVER_MEMORY_GPU);
    request(&rs[1], 2, 3, 1, dx + 2 * IN, TRITONSERVER_MEMORY_GPU);
    execute(&inst, rs, 2);
    ok(right(&rs[0], 0, 2, 0) && right(&rs[1], 2, 3, 0),
       "GPU: device inputs, batched (gathered): right");
    free_responses(rs, 2);

    fake_output_memory = TRITONSERVER_MEMORY_CPU;
    request(&rs[0], 0, 4, 1, dx, TRITONSERVER_MEMORY_GPU);
    execute(&inst, rs, 1);
    fake_output_memory = -1;
    ok(right(&rs[0], 0, 4, 0), "GPU: outputs given in host memory: copied, "
       "right");
    free_responses(rs, 1);
    is_int(0, inst.stats.failed, "GPU: no request failed");
    cudaFree(dx);
    stop(&inst);
#else
    TRITONSERVER_Error *err;
    memset(&inst, 0, sizeof inst);
    inst.model = m;
    inst.name = "mlp_gpu";
    inst.kind = TRITONSERVER_INSTANCEGROUPKIND_GPU;
    err = TRITONBACKEND_ModelInstanceInitialize(&inst);
    is_string("model 'mlp': instance 'mlp_gpu' is KIND_GPU but this mica "
              "backend was built without CUDA",
              err ? TRITONSERVER_ErrorMessage(err) : "(started)",
              "a KIND_GPU instance is refused without CUDA");
    TRITONSERVER_ErrorDelete(err);
#endif
}

static void cleanup(void)
{
    static const char *const models[] = {"mlp", "full", "bad"};
    char path[512];
    size_t k;
    for (k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s/1/model.yaml", dir, models[k]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s/1", dir, models[k]);
        rmdir(path);
        snprintf(path, sizeof path, "%s/%s", dir, models[k]);
        rmdir(path);
    }
    rmdir(dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    TRITONBACKEND_Model m;
    TRITONSERVER_Error *err;
    mica_context_t *ctx;
    char *msg;
    int k, gpu_usable = mica__tb_have_cuda() &&
                        mica_device_usable(MICA_DEVICE_CUDA);

    snprintf(dir, sizeof dir, "%s/mica-test-triton-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail("cannot make a scratch folder");
    if (mica_context_create(&ctx) != MICA_OK)
        bail("cannot create a context");
    mica_context_load_default_modules(ctx);
    k = mica_registry_count(ctx);
    mica_context_destroy(ctx);
    if (k == 0) {
        rmdir(dir);
        skip_all("no mica modules found (MICA_MODULE_DIR)");
    }
    write_model("mlp");
    write_model("full");
    write_model("bad");
    for (k = 0; k < 64 * IN; k++)
        xs[k] = (float)((k * 37) % 23) / 4.0f - 2.5f;
    reference(16);
    plan_lazy();

    err = TRITONBACKEND_Initialize(&backend);
    ok(!err, "the backend initializes");
    TRITONSERVER_ErrorDelete(err);
    err = TRITONBACKEND_GetBackendAttribute(
        &backend, (TRITONBACKEND_BackendAttribute *)&backend);
    ok(!err && backend.parallel &&
       backend.preferred == (gpu_usable ? TRITONSERVER_INSTANCEGROUPKIND_GPU
                                        : TRITONSERVER_INSTANCEGROUPKIND_CPU),
       "it prefers %s instances, loaded in parallel",
       gpu_usable ? "KIND_GPU" : "KIND_CPU");
    TRITONSERVER_ErrorDelete(err);

    msg = load(&m, "mlp", "{\"name\":\"mlp\",\"max_batch_size\":0,"
               "\"input\":[],\"output\":[]}");
    ok(!msg, "a manifest model loads%s%s", msg ? ": " : "", msg ? msg : "");
    if (!msg) {
        contains(m.set_config, "\"max_batch_size\":8,",
                 "auto-complete: max_batch_size 8 (max-batch-size; Triton's "
                 "default-max-batch-size 4 not used)");
        contains(m.set_config, "\"dynamic_batching\":{}",
                 "auto-complete: dynamic batching");
        contains(m.set_config, "\"input\":[{\"name\":\"x\",\"data_type\":"
                 "\"TYPE_FP32\",\"dims\":[3]}]", "auto-complete: input x [3]");
        cpu(&m);
        gpu(&m);
        unload(&m);
    }
    whole();
    bad_models();
    err = TRITONBACKEND_Finalize(&backend);
    ok(!err, "the backend finalizes");
    TRITONSERVER_ErrorDelete(err);
    cleanup();
    return exit_status();
}
