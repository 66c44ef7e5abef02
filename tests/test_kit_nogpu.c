/*
 * tests/test_kit_nogpu.c - loading mica's modules maps no GPU library.
 *
 * Every module .so of $MICA_MODULE_DIR is opened with dlopen and
 * initialized through its entry point (with a host table of the test's
 * own: this program links neither libmica nor the CUDA runtime), and a
 * MatrixMultiply layer of the "cublas" implementation is created and
 * destroyed; after that /proc/self/maps must hold none of the CUDA
 * runtime, cuBLAS, cuBLASLt, cuDNN or the driver library: modules link
 * the CUDA runtime statically and open cuBLAS and the like only when a
 * layer is configured for a device.  Needs a build with CUDA, no GPU.
 */
#include <config.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/module.h"
#include "kit_host.h"
#include "tap.h"

/* Library name stems that must not be mapped: "libcudart.so.13" and
 * "libcudart.so" both start with "libcudart.so". */
static const char *const gpu_libs[] = {
    "libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn",
    "libcuda.so",
};

/* Whether a mapped file's base name starts with `stem`. */
static int mapped(const char *stem)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;

    if (!f)
        bail("cannot read /proc/self/maps");
    while (!found && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/'), *base;
        if (!path)
            continue;
        base = strrchr(path, '/') + 1;
        found = strncmp(base, stem, strlen(stem)) == 0;
    }
    fclose(f);
    return found;
}

/* The "cublas" creator of MatrixMultiply in desc, or NULL. */
static const mica_layer_creator_t *cublas_creator(const mica_module_desc_t *d)
{
    int32_t i;
    for (i = 0; i < d->nb_creators; i++)
        if (strcmp(d->creators[i]->type, "MatrixMultiply") == 0 &&
            strcmp(d->creators[i]->implementation, "cublas") == 0)
            return d->creators[i];
    return NULL;
}

int main(void)
{
    const char *dir = getenv("MICA_MODULE_DIR");
    const mica_layer_creator_t *mm = NULL;
    struct dirent *e;
    int nb = 0;
    size_t i;
    DIR *d;

#ifndef MICA_HAVE_CUDA
    skip_all("built without CUDA: modules have no CUDA code to load");
#endif
    if (!dir || !*dir)
        skip_all("MICA_MODULE_DIR is not set (run through make check)");
    if (!(d = opendir(dir)))
        bail("cannot open %s", dir);
    plan_lazy();
    for (i = 0; i < sizeof gpu_libs / sizeof gpu_libs[0]; i++)
        ok(!mapped(gpu_libs[i]), "before: no %s* mapped", gpu_libs[i]);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        char path[4096];
        mica_module_init_fn init = NULL;
        const mica_module_desc_t *desc = NULL;
        mica_error_t err = {""};
        void *h, *sym;

        if (n < 4 || strcmp(e->d_name + n - 3, ".so") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* Kept open to the end: what it maps stays mapped. */
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        ok(h != NULL, "%s loads%s%s", e->d_name, h ? "" : ": ",
           h ? "" : dlerror());
        if (!h)
            continue;
        if ((sym = dlsym(h, MICA_MODULE_ENTRY_NAME)) != NULL)
            memcpy(&init, &sym, sizeof init);
        ok(init && init(kit_test_host(), &desc, &err) == MICA_OK && desc,
           "  and initializes%s%s", err.msg[0] ? ": " : "", err.msg);
        if (desc && !mm)
            mm = cublas_creator(desc);
        nb++;
    }
    closedir(d);
    ok(nb > 0, "%d modules in %s", nb, dir);
    if (mm) {
        mica_fields_t none = {0, NULL};
        mica_error_t err = {""};
        mica_layer_t *l = mm->create(mm, "mm", &none, &err);
        ok(l != NULL, "a cuBLAS MatrixMultiply layer is created%s%s",
           err.msg[0] ? ": " : "", err.msg);
        if (l)
            l->ops->destroy(l);
    } else {
        skip("no cuBLAS MatrixMultiply among the modules");
    }
    for (i = 0; i < sizeof gpu_libs / sizeof gpu_libs[0]; i++)
        ok(!mapped(gpu_libs[i]), "after: no %s* mapped", gpu_libs[i]);
    return exit_status();
}
