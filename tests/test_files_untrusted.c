/*
 * tests/test_files_untrusted.c - files from outside (issue 25): ONNX
 * files whose protobuf messages nest thousands deep are refused before
 * protobuf-c recurses (fuzz/regress/onnx/nest-*.onnx, made by
 * tests/onnx/make_nested.py; they overflowed the stack before); the files
 * a model names (ONNX external data, a manifest's weights `file` and
 * `npy`) are read only inside the model's folder after following links,
 * and only when regular (a link to /etc/passwd, a folder link, a FIFO, an
 * absolute name are refused with one line; a FIFO without blocking),
 * unless mica_context_allow_folder allowed their folder; output files
 * are created under unpredictable names, never through a planted link.
 * TAP on stdout.
 */
#include <config.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "harness.h"
#include "npy.h"

static char dir[PATH_MAX];
static char path[2 * PATH_MAX];

static const char *at(const char *rel)
{
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return path;
}

static void put(const char *rel, const void *data, size_t n)
{
    FILE *f = fopen(at(rel), "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f))
        bail("cannot write %s", path);
}

static void copy(const char *from, const char *rel)
{
    char buf[4096];
    size_t n;
    FILE *f = fopen(from, "rb"), *g = fopen(at(rel), "wb");
    if (!f || !g)
        bail("cannot copy %s", from);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, g);
    fclose(f);
    if (fclose(g))
        bail("cannot write %s", path);
}

static void link_to(const char *target, const char *rel)
{
    unlink(at(rel));
    if (symlink(target, path) != 0)
        bail("cannot link %s", path);
}

/* ---- ONNX ---------------------------------------------------------------- */

static void onnx_refused(mica_context_t *ctx, const char *file,
                         const char *want, const char *what)
{
    mica_onnx_model_t *m = NULL;
    mica_status_t st = mica_onnx_import(ctx, file, NULL, &m);
    ok(st != MICA_OK && !m, "%s: refused (status %d)", what, (int)st);
    contains(mica_context_error(ctx), want, "  saying '%s'", want);
    ok(!strchr(mica_context_error(ctx), '\n'), "  in one line");
    mica_onnx_destroy(m);
}

static void test_onnx(mica_context_t *ctx, const char *top)
{
    static const float w[2] = {1.5f, 2.5f};
    char src[PATH_MAX + 64];
    mica_onnx_model_t *m = NULL;
    mica_context_t *allowing;

    snprintf(src, sizeof src, "%s/fuzz/regress/onnx/nest-typeproto-5000.onnx",
             top);
    onnx_refused(ctx, src, "protobuf messages nest more than 256 deep",
                 "TypeProtos nested 5000 deep");
    snprintf(src, sizeof src, "%s/fuzz/regress/onnx/nest-if-3000.onnx", top);
    onnx_refused(ctx, src, "protobuf messages nest more than 256 deep",
                 "If subgraphs nested 3000 deep");

    snprintf(src, sizeof src, "%s/fuzz/regress/onnx/dup-output.onnx", top);
    onnx_refused(ctx, src, "node 1 (Identity 'b') of graph 'g' makes 'y', "
                 "which another node already makes: each name is made once",
                 "two nodes making one name");

    /* model/ext-data.onnx reads model/w.bin; outside/w.bin is elsewhere. */
    snprintf(src, sizeof src, "%s/tests/onnx/models/ext-data.onnx", top);
    mkdir(at("model"), 0700);
    mkdir(at("outside"), 0700);
    copy(src, "model/ext-data.onnx");
    put("model/w.bin", w, sizeof w);
    put("outside/w.bin", w, sizeof w);
    if (!ok(mica_onnx_import(ctx, at("model/ext-data.onnx"), NULL, &m) ==
            MICA_OK, "external data inside the model's folder: imported"))
        diag("%s", mica_context_error(ctx));
    mica_onnx_destroy(m);
    m = NULL;

    link_to("/etc/passwd", "model/w.bin");
    onnx_refused(ctx, at("model/ext-data.onnx"), "outside the model's folder",
                 "external data: a link to /etc/passwd");
    unlink(at("model/w.bin"));
    link_to("../outside", "model/sub");
    /* The same file through a folder link: the location is fixed in the
     * model (w.bin), so the link is the file's own. */
    link_to("sub/w.bin", "model/w.bin");
    onnx_refused(ctx, at("model/ext-data.onnx"), "resolves to '",
                 "external data: through a folder link");
    unlink(at("model/w.bin"));
    if (mkfifo(at("model/w.bin"), 0600) != 0)
        bail("mkfifo");
    onnx_refused(ctx, at("model/ext-data.onnx"), "not a regular file",
                 "external data: a FIFO (refused, not waited on)");
    unlink(at("model/w.bin"));

    /* An allowed folder: the link into it is followed. */
    link_to("../outside/w.bin", "model/w.bin");
    if (mica_context_create(&allowing) != MICA_OK ||
        mica_context_load_default_modules(allowing) != MICA_OK)
        bail("cannot make a second context");
    ok(mica_context_allow_folder(allowing, at("outside")) == MICA_OK,
       "mica_context_allow_folder");
    if (!ok(mica_onnx_import(allowing, at("model/ext-data.onnx"), NULL, &m)
            == MICA_OK, "external data in an allowed folder: imported"))
        diag("%s", mica_context_error(allowing));
    mica_onnx_destroy(m);
    ok(mica_context_allow_folder(allowing, at("nowhere")) ==
       MICA_ERR_NOT_FOUND, "allowing a folder that does not exist: refused");
    mica_context_destroy(allowing);
}

/* ---- manifests ----------------------------------------------------------- */

static void manifest_refused(mica_context_t *ctx, const char *weights,
                             const char *want, const char *what)
{
    mica_manifest_t *m = NULL;
    char text[1024];
    FILE *f;
    mica_status_t st;

    snprintf(text, sizeof text, "mica: 1\nname: files\ninputs:\n"
             "  x: {dtype: float32, shape: [2]}\nweights:\n  w: %s\n"
             "layers:\n  - {name: c, type: Constant, outputs: [c], params: "
             "{weights: w, shape: [2]}}\n  - {name: add, type: ElementWise, "
             "inputs: [x, c], outputs: [y], params: {op: sum}}\n"
             "outputs: [y]\n", weights);
    if (!(f = fopen(at("model/net.yaml"), "w")) || fputs(text, f) < 0 ||
        fclose(f))
        bail("cannot write the manifest");
    st = mica_manifest_load(ctx, at("model/net.yaml"), &m);
    if (!want) {
        if (!ok(st == MICA_OK, "%s: loaded", what))
            diag("%s", mica_context_error(ctx));
    } else {
        ok(st != MICA_OK && !m, "%s: refused (status %d)", what, (int)st);
        contains(mica_context_error(ctx), want, "  saying '%s'", want);
    }
    mica_manifest_destroy(m);
}

static void test_manifest(mica_context_t *ctx)
{
    static const float w[2] = {1.5f, 2.5f};
    static const mica_dims_t two = {.nb_dims = 1, .d = {2}};
    char err[256];

    mkdir(at("model"), 0700);
    mkdir(at("outside"), 0700);
    unlink(at("model/w.bin"));
    put("model/w.bin", w, sizeof w);
    manifest_refused(ctx, "{dtype: float32, shape: [2], file: w.bin}", NULL,
                     "weights file inside the folder");
    manifest_refused(ctx, "{dtype: float32, shape: [2], file: /etc/passwd}",
                     "resolves to '/etc/passwd', outside the model's folder",
                     "weights file: /etc/passwd");
    manifest_refused(ctx, "{dtype: float32, shape: [2], file: ../outside/"
                     "w.bin}", "outside the model's folder",
                     "weights file: ../outside/w.bin");
    link_to("/etc/passwd", "model/p.bin");
    manifest_refused(ctx, "{dtype: float32, shape: [2], file: p.bin}",
                     "outside the model's folder",
                     "weights file: a link to /etc/passwd");
    if (mkfifo(at("model/f.bin"), 0600) != 0)
        bail("mkfifo");
    manifest_refused(ctx, "{dtype: float32, shape: [2], file: f.bin}",
                     "not a regular file (a FIFO)", "weights file: a FIFO");
    if (mica__npy_write(at("outside/w.npy"), MICA_FLOAT32, &two, w, 0, err,
                        sizeof err) != MICA_OK)
        bail("%s", err);
    link_to("../outside/w.npy", "model/w.npy");
    manifest_refused(ctx, "{npy: w.npy}", "outside the model's folder",
                     "npy file: a link out of the folder");
    manifest_refused(ctx, "{npy: f.bin}", "not a regular file",
                     "npy file: a FIFO");
}

/* ---- output files ---------------------------------------------------------- */

static void test_outputs(void)
{
    static const float w[2] = {1.5f, 2.5f};
    static const mica_dims_t two = {.nb_dims = 1, .d = {2}};
    char err[256], *tmp = NULL, *tmp2 = NULL, buf[16];
    struct stat sb;
    int fd, fd2;
    FILE *f;

    put("victim", "keep", 4);
    /* The name the writer used before: a planted link there. */
    link_to("victim", ".y.npy.tmp");
    ok(mica__npy_write(at("y.npy"), MICA_FLOAT32, &two, w, 0, err,
                       sizeof err) == MICA_OK, "an .npy written next to a "
       "planted link");
    f = fopen(at("victim"), "rb");
    ok(f && fread(buf, 1, sizeof buf, f) == 4 && !memcmp(buf, "keep", 4),
       "  the link's target is untouched");
    if (f)
        fclose(f);
    ok(lstat(at("y.npy"), &sb) == 0 && S_ISREG(sb.st_mode) &&
       sb.st_size == 136, "  the file is in place");
    fd = mica__create_tmp(at("z"), &tmp);
    fd2 = mica__create_tmp(at("z"), &tmp2);
    ok(fd >= 0 && fd2 >= 0 && strcmp(tmp, tmp2) != 0 &&
       !strncmp(tmp, at(".z."), strlen(at(".z."))),
       "temporary names differ each time (%s, %s)", tmp ? tmp : "-",
       tmp2 ? tmp2 : "-");
    if (fd >= 0)
        close(fd);
    if (fd2 >= 0)
        close(fd2);
    if (tmp)
        unlink(tmp);
    if (tmp2)
        unlink(tmp2);
    free(tmp);
    free(tmp2);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    const char *t = getenv("TMPDIR");
    mica_context_t *ctx;
    char *real;

    if (!top)
        skip_all("MICA_TOP_SRCDIR not set (run through make check)");
    snprintf(dir, sizeof dir, "%s/mica-test-files-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(dir) || !(real = realpath(dir, NULL)))
        bail("cannot make a scratch folder");
    snprintf(dir, sizeof dir, "%s", real);
    free(real);
    plan_lazy();
    ctx = th_context();
    if (mica_onnx_available())
        test_onnx(ctx, top);
    else
        skip("built without the ONNX importer");
    test_manifest(ctx);
    test_outputs();
    {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            diag("could not remove %s", dir);
    }
    return exit_status();
}
