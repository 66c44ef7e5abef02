/*
 * tests/test_lazy_device.c - CPU work never maps a GPU library.
 *
 * The CUDA device is a shared object libmica opens the first time a CUDA
 * device is used (core/device.c), so a process that builds and runs only
 * on the CPU must never map libcuda, libcudart, libcublas, libcublasLt or
 * libcudnn: this test reads /proc/self/maps after each step.
 *
 * First with a module that offers CPU implementations only (the choice
 * test module): a CPU build, an automatic one (which need not probe for a
 * GPU, as nothing could run there), a run, a save and a load.  Then with
 * the installed modules: examples/hello.yaml built for the CPU, run, saved
 * and loaded back, as `mica run --device cpu` and `mica inspect` do.
 * In a build without CUDA every step passes trivially.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/mica.h"
#include "tap.h"

/* The GPU libraries this process has mapped, "" if none. */
static const char *gpu_mapped(void)
{
    static const char *const libs[] = {"libcuda.so", "libcudart.",
                                       "libcublas.", "libcublasLt.",
                                       "libcudnn"};
    static char seen[1024];
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    size_t i, pos = 0;

    seen[0] = '\0';
    if (!f)
        return "(cannot read /proc/self/maps)";
    while (fgets(line, sizeof line, f)) {
        char *slash = strrchr(line, '/'), *base;
        if (!slash)
            continue;
        base = slash + 1;
        base[strcspn(base, "\n")] = '\0';
        for (i = 0; i < sizeof libs / sizeof libs[0]; i++)
            if (strncmp(base, libs[i], strlen(libs[i])) == 0 &&
                !strstr(seen, base) && pos < sizeof seen)
                pos += (size_t)snprintf(seen + pos, sizeof seen - pos,
                                        "%s%s", pos ? ", " : "", base);
    }
    fclose(f);
    return seen;
}

static void no_gpu(const char *what)
{
    const char *seen = gpu_mapped();
    if (!ok(seen[0] == '\0', "%s: no GPU library mapped", what))
        diag("mapped: %s", seen);
}

/* The info lines a context logs, kept for the checks. */
static char info[4096];

static void keep_info(void *user, mica_log_level_t level, const char *msg)
{
    size_t n = strlen(info);
    (void)user;
    if (level == MICA_LOG_INFO && n + strlen(msg) + 2 < sizeof info)
        snprintf(info + n, sizeof info - n, "%s\n", msg);
}

/* Build e for `device`, run it, save it and load it back. */
static void build_run_reload(mica_context_t *ctx, mica_network_t *net,
                             const mica_build_config_t *base, uint32_t device,
                             const char *what)
{
    mica_build_config_t cfg = *base;
    mica_engine_t *e = NULL, *back = NULL;
    mica_exec_t *x = NULL;
    void *bytes = NULL;
    size_t size = 0;
    float v[4] = {1, 2, 3, 4};
    int good;

    cfg.device = device;
    good = mica_engine_build(net, &cfg, &e) == MICA_OK &&
           mica_exec_create(e, &x) == MICA_OK;
    /* v lives until the run: set_input keeps the pointer until then */
    if (good && mica_engine_nb_inputs(e) == 1) {
        mica_dims_t d;
        memset(&d, 0, sizeof d);
        d.nb_dims = 1;
        d.d[0] = 4;
        good = mica_exec_set_input(x, "x", &d, v) == MICA_OK;
    }
    good = good && mica_exec_run(x) == MICA_OK &&
           mica_engine_serialize(e, &bytes, &size) == MICA_OK &&
           mica_engine_deserialize(ctx, bytes, size, &back) == MICA_OK;
    if (!ok(good, "%s: built, run, saved and loaded", what)) {
        diag("%s", mica_context_error(ctx));
        skip("%s: not loaded", what);
    } else
        is_int(MICA_DEVICE_CPU, mica_engine_device(back), "%s: on the cpu",
               what);
    no_gpu(what);
    mica_free(bytes);
    mica_engine_destroy(back);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* A network of one Twin layer (the choice module's) over float32 [4]. */
static void cpu_only_module(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    const char *in[1] = {"x"}, *out[1] = {"y"};
    char path[4096];
    mica_context_t *ctx = NULL;
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    mica_dims_t d;

    snprintf(path, sizeof path, "%s/tests/choice/.libs/choice.so",
             top ? top : ".");
    if (mica_context_create(&ctx) != MICA_OK ||
        mica_context_load_file(ctx, path) != MICA_OK) {
        diag("%s", mica_context_error(ctx));
        skip_block(7, "the choice test module is not built");
        mica_context_destroy(ctx);
        return;
    }
    mica_context_set_logger(ctx, keep_info, NULL, MICA_LOG_INFO);
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "twin";
    spec.type = "Twin";
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_add_layer(net, &spec) != MICA_OK ||
        mica_network_mark_output(net, "y", NULL) != MICA_OK)
        bail("cannot describe the Twin network: %s",
             mica_context_error(ctx));
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    build_run_reload(ctx, net, &cfg, MICA_DEVICE_CPU, "device cpu");
    build_run_reload(ctx, net, &cfg, 0, "device auto, CPU modules only");
#ifdef MICA_HAVE_CUDA
    contains(info, "device auto: cpu (cuda skipped: no loaded module "
             "implements a layer for it)", "auto says why it took the cpu");
#else
    contains(info, "device auto: cpu (cuda skipped: not in this build)",
             "auto says why it took the cpu");
#endif
    mica_network_destroy(net);
    mica_context_destroy(ctx);
}

/* examples/hello.yaml with the modules of $MICA_MODULE_DIR. */
static void real_modules(void)
{
    const char *src = getenv("MICA_TOP_SRCDIR");
    char path[4096];
    mica_context_t *ctx = NULL;
    mica_manifest_t *m = NULL;

    snprintf(path, sizeof path, "%s/examples/hello.yaml", src ? src : ".");
    if (mica_context_create(&ctx) != MICA_OK ||
        mica_context_load_default_modules(ctx) != MICA_OK ||
        mica_manifest_load(ctx, path, &m) != MICA_OK)
        bail("cannot load %s: %s", path, mica_context_error(ctx));
    no_gpu("the modules loaded");
    build_run_reload(ctx, mica_manifest_network(m), mica_manifest_config(m),
                     MICA_DEVICE_CPU, "hello.yaml on the cpu");
    mica_manifest_destroy(m);
    mica_context_destroy(ctx);
}

int main(void)
{
    plan(12);
    no_gpu("at start");
    cpu_only_module();
    real_modules();
    return exit_status();
}
