/*
 * tests/test_registry.c - module loading and creator lookup.
 *
 * Loads the fake modules of tests/modules/ (built as check-only libtool
 * modules into $MICA_TOP_BUILDDIR/tests/modules/.libs): a good one, and
 * one for each way a file or a creator can be refused.  Each refusal must
 * be exactly one line naming the file and the reason, logged as a warning
 * and listed as a load problem, while everything else still loads.  Then
 * lookups: highest version, pinned version, pinned implementation,
 * device filter, priority and its tie-break, and every not-found message.
 */
#include <config.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mica/mica.h"
#include "mica/module.h"
#include "tap.h"

static char dir[PATH_MAX];   /* real path of the fake modules' folder */
static char tmp[PATH_MAX];   /* a scratch folder */

/* The last line the logger got, and how many. */
static char last_log[2048];
static int last_level = -1;
static int nb_logs;

static void capture(void *user, mica_log_level_t level, const char *msg)
{
    (void)user;
    snprintf(last_log, sizeof(last_log), "%s", msg);
    last_level = (int)level;
    nb_logs++;
}

static mica_context_t *new_context(void)
{
    mica_context_t *ctx = NULL;
    if (mica_context_create(&ctx) != MICA_OK)
        bail("mica_context_create failed");
    mica_context_set_logger(ctx, capture, NULL, MICA_LOG_WARNING);
    return ctx;
}

/* "DIR/name.so" in a static buffer (two in rotation). */
static const char *mod(const char *name)
{
    static char buf[2][PATH_MAX + 64];
    static int i;
    i ^= 1;
    snprintf(buf[i], sizeof(buf[i]), "%s/%s.so", dir, name);
    return buf[i];
}

/*
 * Load `name` and check: the status, exactly one new problem equal to
 * "DIR/name.so: REASON", the same line as the context's error and as a
 * warning through the logger.  4 tests.
 */
static void refused(mica_context_t *ctx, const char *name, mica_status_t want,
                    const char *reason)
{
    int32_t before = mica_context_nb_load_problems(ctx);
    int logs = nb_logs;
    char line[PATH_MAX + 512];
    mica_status_t st;

    snprintf(line, sizeof(line), "%s: %s", mod(name), reason);
    st = mica_context_load_file(ctx, mod(name));
    is_string(mica_status_name(want), mica_status_name(st),
              "%s: refused with the right status", name);
    ok(mica_context_nb_load_problems(ctx) == before + 1 &&
           strcmp(mica_context_load_problem(ctx, before), line) == 0,
       "%s: one problem line: %s", name, line);
    is_string(line, mica_context_error(ctx), "%s: same line as the error",
              name);
    ok(nb_logs == logs + 1 && last_level == MICA_LOG_WARNING &&
           strcmp(last_log, line) == 0,
       "%s: logged once as a warning", name);
}

static mica_status_t find(mica_context_t *ctx, const char *ns,
                          const char *type, int32_t version, const char *impl,
                          uint32_t device, mica_creator_info_t *info)
{
    memset(info, 0, sizeof(*info));
    info->struct_size = sizeof(*info);
    return mica_registry_find(ctx, ns, type, version, impl, device, info);
}

/* A lookup that must succeed with this version and implementation. */
static void found(mica_context_t *ctx, const char *ns, const char *type,
                  int32_t version, const char *impl, uint32_t device,
                  int32_t want_version, const char *want_impl,
                  const char *what)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica_status_t st = find(ctx, ns, type, version, impl, device, &info);
    ok(st == MICA_OK && info.version == want_version &&
           strcmp(info.implementation, want_impl) == 0,
       "%s: %s v%d '%s'", what, type, (int)want_version, want_impl);
    if (st != MICA_OK)
        diag("error: %s", mica_context_error(ctx));
    else if (info.version != want_version ||
             strcmp(info.implementation, want_impl) != 0)
        diag("got v%d '%s'", (int)info.version, info.implementation);
}

/* A lookup that must fail with NOT_FOUND and exactly this message. */
static void not_found(mica_context_t *ctx, const char *ns, const char *type,
                      int32_t version, const char *impl, uint32_t device,
                      const char *message)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica_status_t st = find(ctx, ns, type, version, impl, device, &info);
    ok(st == MICA_ERR_NOT_FOUND &&
           strcmp(mica_context_error(ctx), message) == 0,
       "not found: %s", message);
    if (st != MICA_ERR_NOT_FOUND || strcmp(mica_context_error(ctx), message))
        diag("status %s, error '%s'", mica_status_name(st),
             mica_context_error(ctx));
}

static void test_good(mica_context_t *ctx)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    char other[PATH_MAX + 64];
    int32_t i, sorted = 1;

    is_int(MICA_OK, mica_context_load_file(ctx, mod("good")), "good loads");
    is_int(0, mica_context_nb_load_problems(ctx), "good: no problems");
    is_int(6, mica_registry_count(ctx), "good: 6 creators registered");

    /* sorted by (ns, type, version, implementation) */
    for (i = 1; i < mica_registry_count(ctx); i++) {
        mica_creator_info_t a = {.struct_size = sizeof(mica_creator_info_t)};
        mica_creator_info_t b = {.struct_size = sizeof(mica_creator_info_t)};
        mica_registry_get(ctx, i - 1, &a);
        mica_registry_get(ctx, i, &b);
        if (strcmp(a.ns, b.ns) > 0 ||
            (strcmp(a.ns, b.ns) == 0 && strcmp(a.type, b.type) > 0))
            sorted = 0;
    }
    ok(sorted, "entries sorted by namespace and type");
    mica_registry_get(ctx, 0, &info);
    ok(strcmp(info.type, "Widget") == 0 && info.version == 1 &&
           strcmp(info.implementation, "avx") == 0 && info.ns[0] == '\0',
       "entry 0 is Widget v1 'avx' (a NULL namespace reads \"\")");
    mica_registry_get(ctx, 5, &info);
    ok(strcmp(info.type, "Gadget") == 0 && strcmp(info.ns, "acme") == 0,
       "entry 5 is acme::Gadget");
    is_string(mod("good"), info.module_file, "module_file is the real path");
    is_string("good", info.module_name, "module_name");
    is_string("1.2.3", info.module_version, "module_version");
    is_int(MICA_ABI_VERSION, info.abi_version, "abi_version");
    ok(info.creator && info.creator->nb_fields == 2, "creator pointer");
    is_int(MICA_ERR_INVALID, mica_registry_get(ctx, 6, &info),
           "registry_get out of range");

    /* loading the same file again, even by another path, does nothing */
    snprintf(other, sizeof(other), "%s/../.libs/./good.so", dir);
    is_int(MICA_OK, mica_context_load_file(ctx, other),
           "same file by another path: ok");
    ok(mica_registry_count(ctx) == 6 &&
           mica_context_nb_load_problems(ctx) == 0,
       "same file again: nothing new, no problem");
}

static void test_lookup(mica_context_t *ctx)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};

    found(ctx, NULL, "Widget", 0, NULL, 0, 2, "reference",
          "version 0 is the highest");
    found(ctx, "", "Widget", 1, NULL, 0, 1, "cuda",
          "pinned version, any device: highest priority");
    found(ctx, NULL, "Widget", 1, NULL, MICA_DEVICE_CPU, 1, "avx",
          "device cpu: equal priorities go to the first name");
    found(ctx, NULL, "Widget", 1, NULL, MICA_DEVICE_CUDA, 1, "cuda",
          "device cuda");
    found(ctx, NULL, "Widget", 1, "reference", 0, 1, "reference",
          "pinned implementation");
    found(ctx, NULL, "Widget", 1, "simd", MICA_DEVICE_CPU, 1, "simd",
          "pinned implementation and device");
    found(ctx, "acme", "Gadget", 0, NULL, MICA_DEVICE_CUDA, 1, "reference",
          "namespaced type, multi-device implementation");
    found(ctx, NULL, "Sprocket", 0, NULL, 0, 1, "reference",
          "a duplicate's file still registers its other creators");
    found(ctx, NULL, "Cog", 0, NULL, 0, 1, "reference",
          "broken creators do not stop the good one");

    not_found(ctx, NULL, "Widge", 0, NULL, 0,
              "no layer type 'Widge' is registered (did you mean 'Widget'?)");
    not_found(ctx, NULL, "widget", 0, NULL, 0,
              "no layer type 'widget' is registered (did you mean 'Widget'?)");
    not_found(ctx, NULL, "Gadget", 0, NULL, 0,
              "no layer type 'Gadget' is registered "
              "(did you mean 'acme::Gadget'?)");
    not_found(ctx, "acme", "Widget", 0, NULL, 0,
              "no layer type 'acme::Widget' is registered "
              "(did you mean 'Widget'?)");
    not_found(ctx, NULL, "Zebra", 0, NULL, 0,
              "no layer type 'Zebra' is registered");
    not_found(ctx, NULL, "Widget", 3, NULL, 0,
              "Widget v3 is not registered (registered versions: 1, 2)");
    not_found(ctx, NULL, "Widget", 1, "cudnn", 0,
              "Widget v1 has no implementation 'cudnn' "
              "(available: avx, cuda, reference, simd)");
    not_found(ctx, NULL, "Widget", 0, NULL, MICA_DEVICE_CUDA,
              "Widget v2 has no implementation for device cuda "
              "(available: reference[cpu])");
    not_found(ctx, NULL, "Widget", 1, "reference", MICA_DEVICE_CUDA,
              "Widget v1 implementation 'reference' does not run on cuda "
              "(devices: cpu)");
    not_found(ctx, NULL, "Cog", 2, NULL, 0,
              "Cog v2 is not registered (registered versions: 1)");
    is_int(MICA_ERR_INVALID, find(ctx, NULL, "Widget", -1, NULL, 0, &info),
           "a negative version is invalid");
}

static void test_refusals(mica_context_t *ctx)
{
    char line[PATH_MAX + 512];
    int32_t before, i;
    FILE *f;
    static const char *const bad[] = {
        "creators[0] ('Cog'): version 0 is not valid (must be >= 1); skipped",
        "creators[1] ('Cog'): field 'op': enum without values; skipped",
        "creators[2] ('Cog'): field 'axis' is declared twice; skipped",
        ("creators[3] ('Cog'): devices 0x0 name no device this host knows "
         "(cpu 0x1, cuda 0x2); skipped"),
        "creators[4]: is NULL; skipped",
        "creators[5]: has no type name; skipped",
        "creators[6] ('Cog'): has no create function; skipped",
    };

    snprintf(line, sizeof(line),
             "module ABI version %d is newer than this host's "
             "(supports %d..%d)", MICA_ABI_VERSION + 1, MICA_ABI_VERSION_MIN,
             MICA_ABI_VERSION);
    refused(ctx, "abi_new", MICA_ERR_ABI, line);
    snprintf(line, sizeof(line),
             "module ABI version %d is older than this host's "
             "(supports %d..%d)", MICA_ABI_VERSION_MIN - 1,
             MICA_ABI_VERSION_MIN, MICA_ABI_VERSION);
    refused(ctx, "abi_old", MICA_ERR_ABI, line);
    refused(ctx, "no_entry", MICA_ERR_NOT_FOUND,
            "not a mica module: no symbol mica_module_init");
    refused(ctx, "init_fail", MICA_ERR_NOT_FOUND,
            "init failed: needs libwidget.so.3, which is not installed");
    refused(ctx, "init_quiet", MICA_ERR_UNSUPPORTED,
            "init failed: unsupported");
    snprintf(line, sizeof(line),
             "module descriptor struct_size 8 is smaller than ABI version "
             "1's (%u)",
             (unsigned)offsetof(mica_module_desc_t, fusion_rules));
    refused(ctx, "small_desc", MICA_ERR_ABI, line);
    refused(ctx, "missing", MICA_ERR_NOT_FOUND,
            "cannot load: No such file or directory");

    /* a file that is not a shared object at all */
    snprintf(line, sizeof(line), "%s/junk.so", tmp);
    f = fopen(line, "w");
    if (f) {
        fputs("not an ELF file\n", f);
        fclose(f);
    }
    before = mica_context_nb_load_problems(ctx);
    is_int(MICA_ERR_IO, mica_context_load_file(ctx, line),
           "junk.so: refused");
    strcat(line, ": cannot load: ");
    ok(mica_context_nb_load_problems(ctx) == before + 1 &&
           strncmp(mica_context_load_problem(ctx, before), line,
                   strlen(line)) == 0 &&
           !strchr(mica_context_load_problem(ctx, before), '\n') &&
           !strstr(mica_context_load_problem(ctx, before) + strlen(line),
                   "junk.so"),
       "junk.so: one line, the file named once: %s",
       mica_context_load_problem(ctx, before));

    /* a duplicate key: refused, the file's other creator registers */
    before = mica_context_nb_load_problems(ctx);
    is_int(MICA_OK, mica_context_load_file(ctx, mod("twin")),
           "twin: the file is usable");
    snprintf(line, sizeof(line),
             "%s: Widget v1 (implementation 'reference') is already "
             "registered by %s; skipped", mod("twin"), mod("good"));
    ok(mica_context_nb_load_problems(ctx) == before + 1 &&
           strcmp(mica_context_load_problem(ctx, before), line) == 0,
       "twin: %s", line);

    /* broken creators: one line each, the good one registers */
    before = mica_context_nb_load_problems(ctx);
    is_int(MICA_OK, mica_context_load_file(ctx, mod("bad_creators")),
           "bad_creators: the file is usable");
    is_int(before + 7, mica_context_nb_load_problems(ctx),
           "bad_creators: 7 problems");
    for (i = 0; i < 7; i++) {
        snprintf(line, sizeof(line), "%s: %s", mod("bad_creators"), bad[i]);
        is_string(line, mica_context_load_problem(ctx, before + i),
                  "bad_creators: problem %d", (int)i);
    }
    is_int(8, mica_registry_count(ctx),
           "good's 6 creators, Sprocket and Cog are registered");
}

/* The whole folder at once, in name order. */
static void test_dir(void)
{
    static const char *const order[] = {
        "abi_new", "abi_old", "bad_creators", "bad_creators", "bad_creators",
        "bad_creators", "bad_creators", "bad_creators", "bad_creators",
        "init_fail", "init_quiet", "no_entry", "small_desc", "twin",
    };
    mica_context_t *ctx = new_context();
    char sub[PATH_MAX + 16];
    int32_t i, n, in_order = 1;

    is_int(MICA_OK, mica_context_load_dir(ctx, dir), "load_dir: ok");
    n = mica_context_nb_load_problems(ctx);
    is_int(14, n, "load_dir: 14 problems");
    for (i = 0; i < n && i < 14; i++) {
        const char *p = mica_context_load_problem(ctx, i);
        if (strncmp(p, mod(order[i]), strlen(mod(order[i]))) != 0 ||
            p[strlen(mod(order[i]))] != ':') {
            in_order = 0;
            diag("problem %d: %s", (int)i, p);
        }
    }
    ok(in_order, "load_dir: files in name order, one line per problem");
    is_int(8, mica_registry_count(ctx), "load_dir: 8 creators registered");
    mica_context_destroy(ctx);

    ctx = new_context();
    snprintf(sub, sizeof(sub), "%s/nope", tmp);
    is_int(MICA_ERR_NOT_FOUND, mica_context_load_dir(ctx, sub),
           "load_dir of a missing folder");
    contains(mica_context_error(ctx), "nope: cannot open module folder: ",
             "  names the folder");
    /* a folder named x.so is not a module; junk.so is one problem */
    snprintf(sub, sizeof(sub), "%s/folder.so", tmp);
    mkdir(sub, 0700);
    is_int(MICA_OK, mica_context_load_dir(ctx, tmp), "load_dir of scratch");
    ok(mica_context_nb_load_problems(ctx) == 1 &&
           strstr(mica_context_load_problem(ctx, 0), "/junk.so: cannot load"),
       "only junk.so is a problem, folder.so is skipped");
    rmdir(sub);
    mica_context_destroy(ctx);
}

/* $MICA_MODULE_DIR and $MICA_MODULE_PATH */
static void test_default(void)
{
    char path[3 * PATH_MAX];
    mica_context_t *ctx;

    setenv("MICA_MODULE_DIR", "", 1);
    unsetenv("MICA_MODULE_PATH");
    ctx = new_context();
    is_int(MICA_OK, mica_context_load_default_modules(ctx),
           "MICA_MODULE_DIR empty: ok");
    ok(mica_registry_count(ctx) == 0 &&
           mica_context_nb_load_problems(ctx) == 0,
       "MICA_MODULE_DIR empty: no default folder");
    mica_context_destroy(ctx);

    setenv("MICA_MODULE_DIR", dir, 1);
    ctx = new_context();
    is_int(MICA_OK, mica_context_load_default_modules(ctx),
           "MICA_MODULE_DIR: ok");
    ok(mica_registry_count(ctx) == 8 &&
           mica_context_nb_load_problems(ctx) == 14,
       "MICA_MODULE_DIR: the folder is loaded");
    mica_context_destroy(ctx);

    setenv("MICA_MODULE_DIR", "", 1);
    snprintf(path, sizeof(path), ":%s/nowhere::%s:", tmp, dir);
    setenv("MICA_MODULE_PATH", path, 1);
    ctx = new_context();
    is_int(MICA_OK, mica_context_load_default_modules(ctx),
           "MICA_MODULE_PATH with a missing folder: ok");
    is_int(8, mica_registry_count(ctx), "MICA_MODULE_PATH: folder loaded");
    snprintf(path, sizeof(path),
             "%s/nowhere: cannot open module folder: No such file or "
             "directory (in MICA_MODULE_PATH)", tmp);
    ok(mica_context_nb_load_problems(ctx) == 15 &&
           strcmp(mica_context_load_problem(ctx, 0), path) == 0,
       "MICA_MODULE_PATH: one warning for the missing folder: %s", path);
    mica_context_destroy(ctx);
    unsetenv("MICA_MODULE_PATH");
}

/*
 * The default logger: "mica: warning: LINE" on stderr, silenced by
 * MICA_LOG_LEVEL=error (read when the context is created).
 */
static void test_default_logger(void)
{
    char file[PATH_MAX + 16], buf[PATH_MAX + 256], want[PATH_MAX + 256];
    const char *levels[] = {NULL, "error"};
    int i;

    snprintf(file, sizeof(file), "%s/stderr.log", tmp);
    for (i = 0; i < 2; i++) {
        mica_context_t *ctx = NULL;
        int saved = dup(2), fd;
        FILE *f;
        size_t n;

        if (levels[i])
            setenv("MICA_LOG_LEVEL", levels[i], 1);
        else
            unsetenv("MICA_LOG_LEVEL");
        mica_context_create(&ctx);
        fflush(stderr);
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            bail("cannot redirect stderr");
        close(fd);
        mica_context_load_file(ctx, mod("missing"));
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        mica_context_destroy(ctx);
        f = fopen(file, "r");
        n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        buf[n] = '\0';
        if (f)
            fclose(f);
        if (!levels[i]) {
            snprintf(want, sizeof(want),
                     "mica: warning: %s: cannot load: No such file or "
                     "directory\n", mod("missing"));
            is_string(want, buf, "default logger: one warning line");
        } else {
            is_string("", buf, "MICA_LOG_LEVEL=error silences warnings");
        }
    }
    unsetenv("MICA_LOG_LEVEL");
    remove(file);
}

/* fini runs once, when the last context holding the module goes. */
static void test_fini(mica_context_t *ctx)
{
    char file[PATH_MAX + 16], buf[64] = "";
    mica_context_t *second = new_context();
    FILE *f;
    size_t n;

    snprintf(file, sizeof(file), "%s/fini.log", tmp);
    setenv("MICA_TEST_FINI_FILE", file, 1);
    is_int(MICA_OK, mica_context_load_file(second, mod("good")),
           "a second context loads good");
    is_int(6, mica_registry_count(second), "  and sees its creators");
    mica_context_destroy(ctx);
    ok(access(file, F_OK) != 0, "fini not called while a context holds it");
    mica_context_destroy(second);
    f = fopen(file, "r");
    n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    is_string("good fini\n", buf, "fini called once with the last context");
    remove(file);
    unsetenv("MICA_TEST_FINI_FILE");
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[PATH_MAX];
    mica_context_t *ctx;
    char junk[PATH_MAX + 16];

    if (!top)
        skip_all("MICA_TOP_BUILDDIR is not set (run through make check)");
    snprintf(path, sizeof(path), "%s/tests/modules/.libs", top);
    if (!realpath(path, dir))
        bail("%s: fake modules not built", path);
    snprintf(tmp, sizeof(tmp), "%s/test_registry.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp))
        bail("cannot make a scratch folder");
    if (!realpath(tmp, path))
        bail("cannot resolve %s", tmp);
    snprintf(tmp, sizeof(tmp), "%s", path);
    unsetenv("MICA_NO_DLCLOSE");

    plan(97);
    ctx = new_context();
    test_good(ctx);
    test_refusals(ctx);
    test_lookup(ctx);
    test_dir();
    test_default();
    test_default_logger();
    test_fini(ctx);

    snprintf(junk, sizeof(junk), "%s/junk.so", tmp);
    remove(junk);
    rmdir(tmp);
    return exit_status();
}
