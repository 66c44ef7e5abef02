/*
 * app.c - an application using libmica through its installed headers:
 *
 *   cc -std=c99 app.c $(pkg-config --cflags --libs mica) -o app
 *   ./app MANIFEST ENGINE
 *
 * It builds the engine of MANIFEST (examples/dynamic.yaml: x is [N, 3])
 * and saves it as ENGINE, loads ENGINE back, and runs it from two
 * execution contexts with different batch sizes: one gives its input as
 * host data (set_input, run, get_output), the other goes step by step
 * (upload, enqueue, download, sync) and, on a CPU engine, binds its input
 * and output to its own buffers.  It prints each output row sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mica/mica.h>

static mica_context_t *ctx;

/* Print the context's error and exit when st is not MICA_OK. */
static void check(mica_status_t st, const char *what)
{
    if (st == MICA_OK)
        return;
    fprintf(stderr, "app: %s: %s\n", what, mica_context_error(ctx));
    exit(1);
}

static void print(const char *label, const float *y, int64_t n)
{
    int64_t i;
    printf("%s:", label);
    for (i = 0; i < n; i++)
        printf(" %g", y[i]);
    printf("\n");
}

/* Context a: host data in, host data out. */
static void run_simple(mica_engine_t *engine, const float *x, int64_t rows)
{
    mica_exec_t *exec;
    mica_dims_t d;
    mica_tensor_desc_t desc;
    const void *y;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = rows;
    d.d[1] = 3;
    check(mica_exec_create(engine, &exec), "exec");
    check(mica_exec_set_input(exec, "x", &d, x), "set_input");
    check(mica_exec_run(exec), "run");
    check(mica_exec_get_output(exec, "y", &desc, &y), "get_output");
    print("a", y, desc.dims.d[0]);
    mica_exec_destroy(exec);
}

/*
 * Context b: the steps one by one.  On a CPU engine the input and output
 * are bound to this program's memory, so nothing is copied; on a GPU the
 * same would take device memory (cudaMalloc), so this program, which has
 * no CUDA code, copies through upload and download instead.
 */
static void run_stepwise(mica_engine_t *engine, float *x, int64_t rows)
{
    mica_exec_t *exec;
    mica_dims_t d, yd;
    mica_tensor_desc_t desc;
    const void *out;
    int bind = mica_engine_device(engine) == MICA_DEVICE_CPU;
    float *y;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = rows;
    d.d[1] = 3;
    check(mica_exec_create(engine, &exec), "exec");
    if (bind)
        check(mica_exec_bind(exec, "x", &d, x), "bind x");
    else
        check(mica_exec_set_input(exec, "x", &d, x), "set_input");
    check(mica_exec_tensor_dims(exec, "y", &yd), "dims of y");
    y = malloc(sizeof *y * (size_t)yd.d[0]);
    if (!y)
        exit(1);
    if (bind)
        check(mica_exec_bind(exec, "y", NULL, y), "bind y");
    check(mica_exec_upload(exec), "upload");
    check(mica_exec_enqueue(exec), "enqueue");
    check(mica_exec_download(exec), "download");
    check(mica_exec_sync(exec), "sync");
    if (!bind) {
        check(mica_exec_get_output(exec, "y", &desc, &out), "get_output");
        memcpy(y, out, sizeof *y * (size_t)yd.d[0]);
    }
    print("b", y, yd.d[0]);
    free(y);
    mica_exec_destroy(exec);
}

int main(int argc, char **argv)
{
    mica_manifest_t *m;
    mica_engine_t *built, *engine;
    float x[5 * 3];
    int i;

    if (argc != 3) {
        fprintf(stderr, "usage: app MANIFEST ENGINE\n");
        return 2;
    }
    for (i = 0; i < 15; i++)
        x[i] = (float)(i % 4) - 1.0f;
    check(mica_context_create(&ctx), "context");
    check(mica_context_load_default_modules(ctx), "modules");
    check(mica_manifest_load(ctx, argv[1], &m), "manifest");
    check(mica_engine_build(mica_manifest_network(m), mica_manifest_config(m),
                            &built), "build");
    check(mica_engine_save(built, argv[2]), "save");
    mica_engine_destroy(built);
    mica_manifest_destroy(m);
    check(mica_engine_load(ctx, argv[2], &engine), "load");
    run_simple(engine, x, 2);
    run_stepwise(engine, x, 5);
    mica_engine_destroy(engine);
    mica_context_destroy(ctx);
    return 0;
}
