/*
 * tests/test_hostile.c - hostile and broken modules (issue 15): inits that
 * segfault, abort, exit or hang are loaded first by the scanner in a
 * process of their own, reported in one line naming the file and what
 * happened, remembered in the cache until the file changes, and skipped,
 * while this process lives on; an entry symbol that is data is refused
 * without being called; a descriptor or schema claiming more than it
 * holds is refused instead of read out of bounds; instances without ops
 * or a required callback are refused where the host first sees them.
 *
 * The modules of tests/hostile/ are copied into a scratch folder (so that
 * one can be touched); the scanner is the build's ($MICA_SCANNER), the
 * cache a file of the scratch folder, the scan timeout 3 s (a segfault
 * under AddressSanitizer on a busy machine can take more than 1 s to end).
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "mica/mica.h"
#include "tap.h"

static char dir[PATH_MAX];

static const char *const files[] = {
    "crash_segv.so", "crash_abort.so", "crash_exit.so", "crash_hang.so",
    "entry_data.so", "overclaim_creators.so", "overclaim_fields.so",
    "null_ops.so", NULL};

static void copy(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out)
        bail("cannot copy %s to %s", from, to);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            bail("cannot write %s", to);
    fclose(in);
    if (fclose(out) != 0)
        bail("cannot write %s", to);
}

/* The load problem of ctx that starts with dir/FILE, or NULL. */
static const char *problem_of(mica_context_t *ctx, const char *file)
{
    char want[PATH_MAX + 64];
    int32_t i;
    snprintf(want, sizeof want, "%s/%s: ", dir, file);
    for (i = 0; i < mica_context_nb_load_problems(ctx); i++)
        if (!strncmp(mica_context_load_problem(ctx, i), want, strlen(want)))
            return mica_context_load_problem(ctx, i);
    return NULL;
}

static void has_problem(mica_context_t *ctx, const char *file,
                        const char *needle, const char *label)
{
    const char *p = problem_of(ctx, file);
    if (!ok(p != NULL, "%s: one line names %s", label, file))
        return;
    contains(p, needle, "%s: says what happened", label);
}

static mica_context_t *load(void)
{
    mica_context_t *ctx;
    if (mica_context_create(&ctx) != MICA_OK)
        bail("cannot create a context");
    mica_context_set_logger(ctx, NULL, NULL, MICA_LOG_ERROR);
    ok(mica_context_load_dir(ctx, dir) == MICA_OK,
       "the folder loads: %s", mica_context_error(ctx));
    return ctx;
}

static void crashes(mica_context_t *ctx, const char *when)
{
    char label[128];
#ifdef MICA_SANITIZERS
    /* the sanitizers' own handler turns the fault into an exit */
    const char *segv = "while loading";
#else
    const char *segv = "crashed while loading (signal 11, SIGSEGV); skipped "
                       "until the file changes";
#endif
    snprintf(label, sizeof label, "segfault in init (%s)", when);
    has_problem(ctx, "crash_segv.so", segv, label);
    snprintf(label, sizeof label, "abort in init (%s)", when);
    has_problem(ctx, "crash_abort.so", "crashed while loading (signal 6, "
                "SIGABRT); skipped until the file changes", label);
    snprintf(label, sizeof label, "exit in init (%s)", when);
    has_problem(ctx, "crash_exit.so", "exited with status 3 while loading; "
                "skipped until the file changes", label);
    snprintf(label, sizeof label, "hang in init (%s)", when);
    has_problem(ctx, "crash_hang.so", "did not finish loading within 3 s "
                "(the scan was stopped); skipped until the file changes",
                label);
}

static void broken(mica_context_t *ctx)
{
    mica_creator_info_t info;

    has_problem(ctx, "entry_data.so", "not a mica module: its symbol "
                "mica_module_init is data, not a function",
                "entry symbol exported as data");
    has_problem(ctx, "overclaim_creators.so", "module descriptor lists 2 "
                "creators, but its array is not readable that far",
                "descriptor claiming more creators than it has");
    has_problem(ctx, "overclaim_fields.so", "creators[0] ('OverFields'): "
                "declares 2 fields, but its field array is not readable "
                "that far; skipped",
                "creator claiming more fields than it has");
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ok(mica_registry_find(ctx, NULL, "NullOps", 0, NULL, 0, &info) ==
       MICA_OK, "the other modules of the folder are registered");
}

/* Build a one-layer network of `type`; the status, and *x if asked. */
static mica_status_t build(mica_context_t *ctx, const char *type,
                           mica_exec_t **x)
{
    static const char *const ins[] = {"x"}, *const outs[] = {"y"};
    mica_dims_t dims = {1, 0, {4}};
    mica_layer_spec_t spec;
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_status_t st;

    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "n";
    spec.type = type;
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    if ((st = mica_network_create(ctx, &net)) == MICA_OK &&
        (st = mica_network_add_input(net, "x", MICA_FLOAT32, &dims,
                                     NULL)) == MICA_OK &&
        (st = mica_network_add_layer(net, &spec)) == MICA_OK &&
        (st = mica_network_mark_output(net, "y", NULL)) == MICA_OK &&
        (st = mica_engine_build(net, NULL, &e)) == MICA_OK && x)
        st = mica_exec_create(e, x);
    if (x && *x) {
        mica_exec_destroy(*x);
        *x = NULL;
    }
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return st;
}

static void instances(mica_context_t *ctx)
{
    char want[PATH_MAX + 200];
    mica_exec_t *x = NULL;

    ok(build(ctx, "NullOps", NULL) != MICA_OK,
       "an instance without ops: refused");
    snprintf(want, sizeof want, "layer 'n' (NullOps): module %s/null_ops.so: "
             "create returned an instance without ops", dir);
    contains(mica_context_error(ctx), want, "without ops: says so");
    ok(build(ctx, "NoEnqueue", NULL) != MICA_OK,
       "an instance without enqueue: refused");
    snprintf(want, sizeof want, "layer 'n' (NoEnqueue): module "
             "%s/null_ops.so: create returned an instance without enqueue "
             "(a required callback)", dir);
    contains(mica_context_error(ctx), want, "without enqueue: says so");
    ok(build(ctx, "BadClone", &x) != MICA_OK,
       "a clone without ops: refused");
    snprintf(want, sizeof want, "layer 'n' (BadClone): module "
             "%s/null_ops.so: clone returned an instance without ops", dir);
    contains(mica_context_error(ctx), want, "clone without ops: says so");
}

/* Whether the cache file has a "bad" line for FILE. */
static int cached_bad(const char *cache, const char *file)
{
    char line[PATH_MAX + 512], want[PATH_MAX + 64];
    FILE *f = fopen(cache, "r");
    int found = 0;
    snprintf(want, sizeof want, " %s/%s\t", dir, file);
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, "bad ", 4) && strstr(line, want);
    if (f)
        fclose(f);
    return found;
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    const char *tmp = getenv("TMPDIR");
    char from[2 * PATH_MAX], to[2 * PATH_MAX], cache[PATH_MAX + 16], *real;
    char saved[PATH_MAX - 8];
    mica_context_t *ctx;
    struct timeval tv[2];
    int i;

    if (!top || !getenv("MICA_SCANNER"))
        skip_all("MICA_TOP_BUILDDIR or MICA_SCANNER not set (run through "
                 "make check)");
    snprintf(dir, sizeof dir, "%s/mica-test-hostile-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir) || !(real = realpath(dir, NULL)))
        bail("cannot make a scratch folder");
    snprintf(dir, sizeof dir, "%s", real);
    free(real);
    for (i = 0; files[i]; i++) {
        snprintf(from, sizeof from, "%s/tests/hostile/.libs/%s", top,
                 files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        copy(from, to);
    }
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("MICA_REGISTRY_CACHE", cache, 1);
    setenv("MICA_SCAN_TIMEOUT", "3", 1);
    unsetenv("MICA_NO_SCAN");

    plan_lazy();
    /* first sight: scanned in a process of their own */
    ctx = load();
    crashes(ctx, "scanned");
    broken(ctx);
    instances(ctx);
    mica_context_destroy(ctx);
    ok(cached_bad(cache, "crash_segv.so") && cached_bad(cache, "crash_abort.so")
       && cached_bad(cache, "crash_exit.so") && cached_bad(cache, "crash_hang.so"),
       "the cache remembers the four");

    /* remembered: no scanner now, and the crashing files are not loaded */
    setenv("MICA_SCANNER", "/nonexistent/mica-scan-module", 1);
    ctx = load();
    crashes(ctx, "remembered");
    mica_context_destroy(ctx);

    /* a file that changes is scanned again (and still exits) */
    snprintf(from, sizeof from, "%s/registry/mica-scan-module", top);
    setenv("MICA_SCANNER", from, 1);
    snprintf(to, sizeof to, "%s/crash_exit.so", dir);
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec += 10;
    tv[1] = tv[0];
    if (utimes(to, tv) != 0)
        bail("cannot touch %s", to);
    ctx = load();
    has_problem(ctx, "crash_exit.so", "exited with status 3 while loading",
                "exit in init (changed, scanned again)");
    mica_context_destroy(ctx);
    {
        char line[PATH_MAX + 512], want[64];
        struct stat sb;
        FILE *f = fopen(cache, "r");
        int found = 0;
        stat(to, &sb);
        snprintf(want, sizeof want, "bad %lld %lld ", (long long)sb.st_size,
                 (long long)sb.st_mtim.tv_sec * 1000000000ll +
                     sb.st_mtim.tv_nsec);
        while (f && !found && fgets(line, sizeof line, f))
            found = !strncmp(line, want, strlen(want)) &&
                    strstr(line, "/crash_exit.so\t");
        if (f)
            fclose(f);
        ok(found, "the cache holds the changed file's new verdict");
    }

    /* Issue 25: no working scanner and a file never scanned (changed):
     * not loaded in-process, and the line says how to allow it. */
    setenv("MICA_SCANNER", "/nonexistent/mica-scan-module", 1);
    {
        char good[2 * PATH_MAX];
        snprintf(good, sizeof good, "%s/tests/modules/.libs/good.so", top);
        memcpy(saved, dir, sizeof saved);
        saved[sizeof saved - 1] = 0;
        snprintf(dir, sizeof dir, "%s/only", saved);
        mkdir(dir, 0700);
        snprintf(to, sizeof to, "%s/good.so", dir);
        copy(good, to);
    }
    ctx = load();
    has_problem(ctx, "good.so", "never loaded in a process of its own "
                "(the module scanner /nonexistent/mica-scan-module cannot "
                "start), so not loaded in this one: set MICA_SCAN=off",
                "no scanner: an unscanned module");
    mica_context_destroy(ctx);
    setenv("MICA_SCANNER", from, 1);
    setenv("MICA_SCANNER", "/bin/true", 1);
    ctx = load();
    has_problem(ctx, "good.so", "/bin/true scanned nothing",
                "a scanner that scans nothing: an unscanned module");
    mica_context_destroy(ctx);
    setenv("MICA_SCAN", "off", 1);
    ctx = load();
    ok(!problem_of(ctx, "good.so"),
       "MICA_SCAN=off: loaded in the process, as the user chose");
    mica_context_destroy(ctx);
    unsetenv("MICA_SCAN");
    setenv("MICA_SCANNER", from, 1);
    remove(to);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s", saved);

    for (i = 0; files[i]; i++) {
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        remove(to);
    }
    remove(cache);
    rmdir(dir);
    return exit_status();
}
