/*
 * tests/test_onnx_backend.c - ONNX's backend tests (node,
 * pytorch-converted, pytorch-operator, simple) as a conformance suite,
 * from two copies of the data: Debian's libonnx-testdata (onnx 1.12,
 * 1072 folders) and the onnx 1.19.1 wheel's (the last release that ships
 * node/, 1755 folders).  Every folder's model.onnx is imported, built on
 * the CPU and run on each test_data_set_*, and its outputs compared with
 * output_*.pb as ONNX's runner does (rtol 1e-3, atol 1e-7).
 *
 * One TAP result per folder: ok when it passes; a folder that fails and
 * is listed in its expectations file, with its reason, is a skip with
 * that reason (and a diagnostic when it fails for another reason now);
 * a listed folder that passes now is "not ok" (refresh the file: make
 * onnx-expected), as is any failure not listed.  Every folder
 * runs in a child process under a time limit, so a crash or a hang is a
 * failure of its own and the suite goes on.
 *
 * Each copy has its expectations file (tests/onnx/expected.txt for
 * Debian's, expected-1.19.1.txt for the wheel's).  With --generate LABEL,
 * prints one of them instead (what fails now, each with the first line
 * of why).
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "mica/mica.h"
#include "mica/kit_half.h"
#include "mica/kit_minifloat.h"

#define TIME_LIMIT_S 30
#define MAX_IO 64

static const char *const sets[] = {"node", "pytorch-converted",
                                   "pytorch-operator", "simple"};

/* ---- the expectations file ---------------------------------------------- */

typedef struct expect {
    char *name;
    char *reason;
} expect_t;

static expect_t *expected;
static size_t nb_expected;

static void load_expected(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    if (!f)
        bail("cannot open the expectations file '%s': %s", path,
             strerror(errno));
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');
        expect_t *g;
        if (nl)
            *nl = '\0';
        if (line[0] == '#' || !line[0] || !tab)
            continue;
        *tab = '\0';
        g = realloc(expected, sizeof *g * (nb_expected + 1));
        if (!g)
            bail("out of memory");
        expected = g;
        expected[nb_expected].name = strdup(line);
        expected[nb_expected].reason = strdup(tab + 1);
        nb_expected++;
    }
    fclose(f);
}

static const char *expected_reason(const char *name)
{
    size_t i;
    for (i = 0; i < nb_expected; i++)
        if (!strcmp(expected[i].name, name))
            return expected[i].reason;
    return NULL;
}

/* ---- one folder, in the child --------------------------------------------- */

static char why[1024];

static int fail(const char *fmt, ...) TAP_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    va_list ap;
    char *nl;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    while ((nl = strpbrk(why, "\t\n")))
        *nl = ' ';
    return -1;
}

static double value(mica_dtype_t t, const void *p, int64_t i)
{
    const uint8_t *b = (const uint8_t *)p + i * (int64_t)mica_dtype_size(t);
    switch (t) {
    case MICA_FLOAT32: { float v; memcpy(&v, b, 4); return v; }
    case MICA_FLOAT64: { double v; memcpy(&v, b, 8); return v; }
    case MICA_INT32: { int32_t v; memcpy(&v, b, 4); return v; }
    case MICA_UINT32: { uint32_t v; memcpy(&v, b, 4); return v; }
    case MICA_INT64: { int64_t v; memcpy(&v, b, 8); return (double)v; }
    case MICA_UINT64: { uint64_t v; memcpy(&v, b, 8); return (double)v; }
    case MICA_INT16: { int16_t v; memcpy(&v, b, 2); return v; }
    case MICA_UINT16: { uint16_t v; memcpy(&v, b, 2); return v; }
    case MICA_INT8: case MICA_INT4: return (int8_t)*b;
    case MICA_UINT8: case MICA_BOOL: case MICA_UINT4: return *b;
    case MICA_FLOAT16: { uint16_t h; memcpy(&h, b, 2);
                         return mica_kit_half_to_float(h); }
    case MICA_BFLOAT16: { uint16_t h; memcpy(&h, b, 2);
                          return mica_kit_bf16_to_float(h); }
    case MICA_FP8E4M3: return mica_kit_mf_to_double(*b, 4, 3, 7,
                                                    MICA_KIT_MF_FN);
    case MICA_FP8E4M3FNUZ: return mica_kit_mf_to_double(*b, 4, 3, 8,
                                                        MICA_KIT_MF_FNUZ);
    case MICA_FP8E5M2: return mica_kit_mf_to_double(*b, 5, 2, 15,
                                                    MICA_KIT_MF_IEEE);
    case MICA_FP8E5M2FNUZ: return mica_kit_mf_to_double(*b, 5, 2, 16,
                                                        MICA_KIT_MF_FNUZ);
    case MICA_FP4E2M1: return mica_kit_mf_to_double(*b & 0xf, 2, 1, 1,
                                                    MICA_KIT_MF_NONE);
    case MICA_FP8E8M0: return mica_kit_e8m0_to_double(*b);
    default: return NAN;
    }
}

/* Compare an output with its reference as numpy's assert_allclose. */
static int compare(const char *name, const mica_tensor_desc_t *got,
                   const void *g, const mica_tensor_desc_t *want,
                   const void *w)
{
    int64_t i, n = mica_dims_volume(&want->dims);
    int32_t k;
    if (got->dims.nb_dims != want->dims.nb_dims)
        return fail("output '%s' has rank %d, the reference %d", name,
                    (int)got->dims.nb_dims, (int)want->dims.nb_dims);
    for (k = 0; k < got->dims.nb_dims; k++)
        if (got->dims.d[k] != want->dims.d[k])
            return fail("output '%s': dimension %d is %lld, the reference "
                        "%lld", name, (int)k, (long long)got->dims.d[k],
                        (long long)want->dims.d[k]);
    for (i = 0; i < n; i++) {
        double a = value(got->dtype, g, i), b = value(want->dtype, w, i);
        if (isnan(a) && isnan(b))
            continue;
        if (!(fabs(a - b) <= 1e-7 + 1e-3 * fabs(b)) && a != b)
            return fail("output '%s': element %lld is %.9g, the reference "
                        "%.9g", name, (long long)i, a, b);
    }
    return 0;
}

static char *path_of(const char *dir, const char *file)
{
    char *p = malloc(strlen(dir) + strlen(file) + 2);
    if (p)
        sprintf(p, "%s/%s", dir, file);
    return p;
}

/* The int32 copy of int64 data, NULL (after a message) if one overflows. */
static void *narrowed(const mica_tensor_desc_t *d, const void *data)
{
    int64_t i, n = mica_dims_volume(&d->dims);
    int32_t *out = malloc((size_t)(n > 0 ? n : 1) * 4);
    for (i = 0; out && i < n; i++) {
        int64_t v = ((const int64_t *)data)[i];
        if (v < INT32_MIN || v > INT32_MAX) {
            free(out);
            fail("input value %lld does not fit the int32 mica narrows "
                 "int64 to", (long long)v);
            return NULL;
        }
        out[i] = (int32_t)v;
    }
    return out;
}

/* Test data mica cannot read (sequences, optionals, strings) belongs to
 * models the importer refuses: its refusal is the better reason. */
static void unreadable(mica_context_t *ctx, const char *model)
{
    mica_onnx_model_t *om = NULL;
    if (mica_onnx_import(ctx, model, NULL, &om) != MICA_OK)
        fail("%s", mica_context_error(ctx));
    mica_onnx_destroy(om);
}

/* Run one data set folder against model `model`; 0 or -1 with `why`. */
static int data_set(mica_context_t *ctx, const char *model, const char *ds)
{
    mica_tensor_desc_t in[MAX_IO], ref[MAX_IO];
    void *in_data[MAX_IO] = {0}, *ref_data[MAX_IO] = {0};
    void *narrow[MAX_IO] = {0};
    int32_t nb_in = 0, nb_ref = 0, i;
    mica_onnx_options_t opt;
    mica_onnx_model_t *om = NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_build_config_t cfg;
    int rc = -1;
    char file[64];

    for (;;) {
        char *p;
        snprintf(file, sizeof file, "input_%d.pb", (int)nb_in);
        p = path_of(ds, file);
        if (!p || access(p, R_OK) != 0 || nb_in == MAX_IO) {
            free(p);
            break;
        }
        if (mica_onnx_read_tensor(ctx, p, &in[nb_in], &in_data[nb_in])) {
            free(p);
            fail("%s", mica_context_error(ctx));
            unreadable(ctx, model);
            goto out;
        }
        free(p);
        nb_in++;
    }
    for (;;) {
        char *p;
        snprintf(file, sizeof file, "output_%d.pb", (int)nb_ref);
        p = path_of(ds, file);
        if (!p || access(p, R_OK) != 0 || nb_ref == MAX_IO) {
            free(p);
            break;
        }
        if (mica_onnx_read_tensor(ctx, p, &ref[nb_ref], &ref_data[nb_ref])) {
            free(p);
            fail("%s", mica_context_error(ctx));
            unreadable(ctx, model);
            goto out;
        }
        free(p);
        nb_ref++;
    }
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.nb_inputs = nb_in;
    opt.input_descs = in;
    opt.input_data = (const void *const *)in_data;
    if (mica_onnx_import(ctx, model, &opt, &om) != MICA_OK
        || mica_onnx_manifest(om, &m) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &engine)
        != MICA_OK || mica_exec_create(engine, &exec) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    if (mica_engine_nb_inputs(engine) != nb_in) {
        fail("the network has %d inputs, the data set %d",
             (int)mica_engine_nb_inputs(engine), (int)nb_in);
        goto out;
    }
    for (i = 0; i < nb_in; i++) {
        mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
        const void *data = in_data[i];
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        mica_engine_tensor(engine, mica_engine_input(engine, i), &info);
        /* The engine reads the data when it runs: kept until then. */
        if (in[i].dtype == MICA_INT64 && info.dtype == MICA_INT32) {
            if (!(data = narrow[i] = narrowed(&in[i], in_data[i])))
                goto out;
        }
        if (mica_exec_set_input(exec, info.name, &in[i].dims, data)
            != MICA_OK) {
            fail("%s", mica_context_error(ctx));
            goto out;
        }
    }
    if (mica_exec_infer_shapes(exec) != MICA_OK
        || mica_exec_run(exec) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    if (mica_engine_nb_outputs(engine) != nb_ref) {
        fail("the network has %d outputs, the data set %d",
             (int)mica_engine_nb_outputs(engine), (int)nb_ref);
        goto out;
    }
    for (i = 0; i < nb_ref; i++) {
        mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
        mica_tensor_desc_t d;
        const void *g;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        mica_engine_tensor(engine, mica_engine_output(engine, i), &info);
        if (mica_exec_get_output(exec, info.name, &d, &g) != MICA_OK) {
            fail("%s", mica_context_error(ctx));
            goto out;
        }
        if (compare(info.name, &d, g, &ref[i], ref_data[i]) != 0)
            goto out;
    }
    rc = 0;
out:
    if (exec)
        mica_exec_destroy(exec);
    if (engine)
        mica_engine_destroy(engine);
    mica_manifest_destroy(m);
    mica_onnx_destroy(om);
    for (i = 0; i < nb_in; i++) {
        mica_free(in_data[i]);
        free(narrow[i]);
    }
    for (i = 0; i < nb_ref; i++)
        mica_free(ref_data[i]);
    return rc;
}

static int sorted_names(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int n = 0, i, j;
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        char **g;
        if (e->d_name[0] == '.')
            continue;
        g = realloc(names, sizeof *g * (size_t)(n + 1));
        if (!g)
            bail("out of memory");
        names = g;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *out = names;
    return n;
}

/* The whole folder: every data set; 0 or -1 with `why`. */
static int folder(mica_context_t *ctx, const char *dir)
{
    char *model = path_of(dir, "model.onnx"), **names = NULL;
    int n = sorted_names(dir, &names), i, rc = 0, any = 0;
    for (i = 0; i < n; i++) {
        if (!strncmp(names[i], "test_data_set_", 14) && rc == 0) {
            char *ds = path_of(dir, names[i]);
            any = 1;
            rc = data_set(ctx, model, ds);
            free(ds);
        }
        free(names[i]);
    }
    free(names);
    free(model);
    if (!any && rc == 0)
        return fail("no test_data_set_* folder");
    return rc;
}

/* The reason without the folder's path: "model.onnx: ..." reads better
 * in the expectations file, and stays the same on every machine. */
static void shorten(const char *dir)
{
    size_t n = strlen(dir);
    char *p;
    while ((p = strstr(why, dir)) != NULL) {
        memmove(p, p + n + (p[n] == '/'), strlen(p + n + (p[n] == '/')) + 1);
    }
}

/* ---- the parent: one child per folder ------------------------------------ */

/* 0 passed, 1 failed (why), 2 crashed or timed out (why). */
static int run_child(mica_context_t *ctx, const char *dir)
{
    int fds[2], status;
    pid_t pid;
    ssize_t got;
    char buf[sizeof why];

    if (pipe(fds) != 0)
        bail("pipe: %s", strerror(errno));
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bail("fork: %s", strerror(errno));
    if (pid == 0) {
        int rc;
        close(fds[0]);
        alarm(TIME_LIMIT_S);
        rc = folder(ctx, dir);
        if (rc == 0)
            why[0] = '\0';
        shorten(dir);
        if (write(fds[1], why, strlen(why) + 1) < 0)
            _exit(3);
        _exit(rc == 0 ? 0 : 1);
    }
    close(fds[1]);
    got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    buf[got > 0 ? got : 0] = '\0';
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status)) {
        snprintf(why, sizeof why, WTERMSIG(status) == SIGALRM
                 ? "timed out after %d s" : "crashed (signal %d)",
                 WTERMSIG(status) == SIGALRM ? TIME_LIMIT_S
                                             : WTERMSIG(status));
        return 2;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    snprintf(why, sizeof why, "%s", buf[0] ? buf : "failed without a "
                                                   "message");
    return WIFEXITED(status) && WEXITSTATUS(status) == 1 ? 1 : 2;
}

/* ---- the suites ----------------------------------------------------------- */

/* A copy of ONNX's backend test data, with its expectations file. */
typedef struct suite {
    const char *label;    /* the TAP names' prefix; --generate's argument */
    const char *env;      /* the variable that names its folder */
    const char *fallback; /* the folder when the variable is unset */
    const char *expected; /* under tests/onnx/ */
    const char *what;     /* for messages */
} suite_t;

static const suite_t suites[] = {
    {"debian", "MICA_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data",
     "expected.txt", "Debian's libonnx-testdata (onnx 1.12)"},
    {"onnx-1.19.1", "MICA_ONNX_WHEEL_TESTDATA", NULL, "expected-1.19.1.txt",
     "the onnx 1.19.1 wheel's onnx/backend/test/data"},
};
#define NB_SUITES ((int)(sizeof suites / sizeof suites[0]))

typedef struct found {
    const char *data;    /* NULL: absent */
    char **names[4];
    int counts[4];
    int total;
} found_t;

/* Lists the folders of suite s, if its data is there. */
static void find_suite(const suite_t *s, found_t *f)
{
    char path[4096];
    int k;
    memset(f, 0, sizeof *f);
    f->data = getenv(s->env);
    if (!f->data || !f->data[0])
        f->data = s->fallback;
    if (!f->data)
        return;
    snprintf(path, sizeof path, "%s/node", f->data);
    if (access(path, R_OK) != 0) {
        f->data = NULL;
        return;
    }
    for (k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", f->data, sets[k]);
        f->counts[k] = sorted_names(path, &f->names[k]);
        if (f->counts[k] < 0)
            f->counts[k] = 0;
        f->total += f->counts[k];
    }
}

static void forget_expected(void)
{
    size_t i;
    for (i = 0; i < nb_expected; i++) {
        free(expected[i].name);
        free(expected[i].reason);
    }
    free(expected);
    expected = NULL;
    nb_expected = 0;
}

/* Runs every folder of a found suite: TAP results (or, generating, the
 * expectations file on stdout); frees the names. */
static void run_suite(mica_context_t *ctx, const suite_t *su, found_t *f,
                      int generate, int sample)
{
    int passed = 0, skipped = 0, k, i;
    for (k = 0; k < 4; k++) {
        for (i = 0; i < f->counts[k]; i++) {
            char name[512], tap[600], dir[4096];
            const char *exp;
            int r;
            snprintf(name, sizeof name, "%s/%s", sets[k], f->names[k][i]);
            snprintf(tap, sizeof tap, "%s: %s", su->label, name);
            snprintf(dir, sizeof dir, "%s/%s", f->data, name);
            free(f->names[k][i]);
            /* Under valgrind (make check-valgrind) a sample runs: every
             * folder would take half an hour. */
            if (sample > 1 && i % sample != 0) {
                if (!generate)
                    skip("%s: under valgrind only every %dth folder runs",
                         tap, sample);
                continue;
            }
            r = access(dir, R_OK) == 0 ? run_child(ctx, dir) : 1;
            if (generate) {
                if (r)
                    printf("%s\t%s\n", name, why);
                continue;
            }
            exp = expected_reason(name);
            if (r == 0 && exp)
                ok(0, "%s passes now, but tests/onnx/%s lists it (%s): run "
                   "'make onnx-expected'", tap, su->expected, exp);
            else if (r == 0)
                passed += ok(1, "%s", tap);
            else if (r == 1 && exp) {
                skip("%s: %s", tap, exp);
                if (strcmp(exp, why))
                    diag("%s fails otherwise now: %s", tap, why);
                skipped++;
            } else
                ok(0, "%s: %s", tap, why);
        }
        free(f->names[k]);
    }
    if (!generate)
        diag("ONNX backend tests, %s: %d passed, %d not supported, %d in "
             "all", su->what, passed, skipped, f->total);
}

/*
 * Both suites as one TAP stream, each folder against its suite's
 * expectations file; a suite whose data is absent is left out (said in a
 * diagnostic), and with neither the test is skipped.  With --generate
 * LABEL, the expectations file of that suite on stdout.
 */
int main(int argc, char **argv)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    const char *gen = argc > 2 && !strcmp(argv[1], "--generate") ? argv[2]
                                                                 : NULL;
    char path[4096];
    found_t found[NB_SUITES];
    int total = 0, s;
    mica_context_t *ctx = NULL;
    const char *preload = getenv("LD_PRELOAD");
    int sample = preload && strstr(preload, "vgpreload") ? 40 : 1;

    if (argc > 1 && !gen) {
        fprintf(stderr, "usage: %s [--generate debian|onnx-1.19.1]\n",
                argv[0]);
        return 2;
    }
    if (!mica_onnx_available()) {
        if (gen)
            return 0;
        skip_all("this mica was built without the ONNX importer");
    }
    for (s = 0; s < NB_SUITES; s++) {
        find_suite(&suites[s], &found[s]);
        if (gen && strcmp(gen, suites[s].label))
            found[s].data = NULL;
        if (found[s].data)
            total += found[s].total;
    }
    if (gen && (total == 0 || gen[0] == '\0')) {
        fprintf(stderr, "no ONNX test data for '%s' (set %s or %s)\n", gen,
                suites[0].env, suites[1].env);
        return 1;
    }
    if (total == 0)
        skip_all("no ONNX backend test data: install libonnx-testdata or "
                 "set MICA_ONNX_WHEEL_TESTDATA to the onnx 1.19.1 wheel's "
                 "onnx/backend/test/data");
    if (mica_context_create(&ctx) != MICA_OK
        || mica_context_load_default_modules(ctx) != MICA_OK)
        bail("cannot set up a context: %s", mica_context_error(ctx));
    if (!gen)
        plan(total);
    for (s = 0; s < NB_SUITES; s++) {
        if (!found[s].data) {
            if (!gen)
                diag("left out: %s (not found; %s names its folder)",
                     suites[s].what, suites[s].env);
            continue;
        }
        if (gen)
            printf("# ONNX backend tests of %s that do not pass, each with "
                   "why.\n# Written by 'make onnx-expected'; "
                   "tests/test_onnx_backend.c reads it.\n", suites[s].what);
        else {
            snprintf(path, sizeof path, "%s/tests/onnx/%s", top ? top : ".",
                     suites[s].expected);
            load_expected(path);
        }
        run_suite(ctx, &suites[s], &found[s], gen != NULL, sample);
        forget_expected();
    }
    mica_context_destroy(ctx);
    return gen ? 0 : exit_status();
}
