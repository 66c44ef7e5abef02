/*
 * tools/run_output.c - what `mica run` writes: every network output (and
 * every output for shapes) as DIR/NAME.npy, in the shape it has in this
 * run, with its first values printed.  Nothing is written unless
 * everything succeeded: outputs go to temporary files first and are
 * renamed into place at the end; a folder made for them is removed again
 * on failure.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The first values of an output, on one line: "  [1.5, 0, 4.5, ...]". */
static void print_values(const mica_tensor_desc_t *d, const void *data)
{
    int64_t n = mica_dims_volume(&d->dims), i, shown = n < 16 ? n : 16;
    printf("  [");
    for (i = 0; i < shown; i++) {
        double v = 0;
        switch (d->dtype) {
        case MICA_FLOAT32: v = ((const float *)data)[i]; break;
        case MICA_FLOAT16:
            v = half_to_double(((const uint16_t *)data)[i]);
            break;
        case MICA_INT8: v = ((const int8_t *)data)[i]; break;
        case MICA_INT32: v = ((const int32_t *)data)[i]; break;
        case MICA_INT64: v = (double)((const int64_t *)data)[i]; break;
        case MICA_BOOL: case MICA_UINT8: v = ((const uint8_t *)data)[i]; break;
        default: break;
        }
        printf("%s%.7g", i ? ", " : "", v);
    }
    printf("%s]\n", n > shown ? ", ..." : "");
}

/* Make `dir` and its missing parents; *made gets the top one made. */
static int make_dir(const char *dir, char **made)
{
    char *p = strdup(dir), *s;
    struct stat sb;
    int rc = 0;

    *made = NULL;
    if (!p)
        return -1;
    for (s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (stat(p, &sb) != 0) {
            if (mkdir(p, 0777) != 0) {
                rc = -1;
                break;
            }
            if (!*made && !(*made = strdup(p))) {
                rc = -1;
                break;
            }
        } else if (!S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            rc = -1;
            break;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

/* Remove `top` and the empty folders below it down to `dir`. */
static void unmake_dir(const char *dir, const char *top)
{
    char *p = strdup(dir), *s;
    if (!p)
        return;
    while (strlen(p) >= strlen(top)) {
        if (rmdir(p) != 0)
            break;
        s = strrchr(p, '/');
        if (!s)
            break;
        *s = '\0';
    }
    free(p);
}

/*
 * The tensors to write: the network outputs in order, then the outputs for
 * shapes that are not network outputs too.  *nb gets their number.
 */
static int32_t *output_tensors(mica_engine_t *engine, int32_t *nb)
{
    int32_t nb_out = mica_engine_nb_outputs(engine);
    int32_t nb_t = mica_engine_nb_tensors(engine), i, k;
    int32_t *list = calloc((size_t)(nb_out + nb_t) + 1, sizeof(int32_t));

    *nb = 0;
    if (!list)
        return NULL;
    for (i = 0; i < nb_out; i++)
        list[(*nb)++] = mica_engine_output(engine, i);
    for (i = 0; i < nb_t; i++) {
        mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_engine_tensor(engine, i, &info) != MICA_OK
            || !info.is_shape_output)
            continue;
        for (k = 0; k < nb_out && list[k] != i; k++)
            ;
        if (k == nb_out)
            list[(*nb)++] = i;
    }
    return list;
}

/* DIR/NAME.npy (cli.h). */
char *cli_npy_path(const char *dir, const char *name)
{
    size_t n = strlen(dir), k = 0;
    const unsigned char *p;
    char *path = malloc(n + 3 * strlen(name) + 6);
    if (!path)
        return NULL;
    memcpy(path, dir, n);
    path[n++] = '/';
    for (p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')
            || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'
            || *p == '-')
            path[n + k++] = (char)*p;
        else
            k += (size_t)sprintf(path + n + k, "%%%02X", *p);
    }
    /* "." and ".." are no file names of their own. */
    if ((k == 1 && path[n] == '.') || (k == 2 && path[n] == '.'
                                       && path[n + 1] == '.')) {
        size_t j, m = k;
        for (j = 0; j < m; j++)
            sprintf(path + n + 3 * j, "%%2E");
        k = 3 * m;
    }
    strcpy(path + n + k, ".npy");
    return path;
}

int cli_write_npys(const char *out_dir, int32_t nb, const char *const *names,
                   const mica_tensor_desc_t *desc, const void *const *data,
                   const char *print)
{
    int32_t i, k;
    char **paths = calloc((size_t)nb + 1, sizeof(char *));
    char **tmps = calloc((size_t)nb + 1, sizeof(char *));
    char *made = NULL, err[1024], ds[128];
    int rc = CLI_ERROR, written = 0;

    if (!paths || !tmps) {
        cli_error("out of memory");
        goto out;
    }
    /* Every path in hand before anything is written. */
    for (i = 0; i < nb; i++) {
        if (!mica__npy_descr(desc[i].dtype)) {
            cli_error("output '%s': %s has no .npy form", names[i],
                      mica_dtype_name(desc[i].dtype));
            goto out;
        }
        if (!(paths[i] = cli_npy_path(out_dir, names[i]))) {
            cli_error("out of memory");
            goto out;
        }
    }
    if (make_dir(out_dir, &made) != 0) {
        cli_error("cannot create the output folder '%s': %s", out_dir,
                  strerror(errno));
        goto out;
    }
    for (i = 0; i < nb; i++, written++) {
        if (mica__npy_write_tmp(paths[i], desc[i].dtype, &desc[i].dims,
                                data[i], 0, &tmps[i], err, sizeof(err))
            != MICA_OK) {
            cli_error("output '%s': %s", names[i], err);
            goto out;
        }
    }
    for (i = 0; i < nb; i++) {
        if (rename(tmps[i], paths[i]) != 0) {
            cli_error("cannot rename '%s' to '%s': %s", tmps[i], paths[i],
                      strerror(errno));
            for (k = 0; k < i; k++)
                remove(paths[k]);
            goto out;
        }
        free(tmps[i]);
        tmps[i] = NULL;
    }
    written = 0;
    if (print && *print)
        printf("%s\n", print);
    for (i = 0; print && i < nb; i++) {
        printf("%s: %s %s -> %s\n", names[i], mica_dtype_name(desc[i].dtype),
               cli_dims_str(&desc[i].dims, ds, sizeof(ds)), paths[i]);
        print_values(&desc[i], data[i]);
    }
    rc = CLI_OK;
out:
    for (k = 0; k < written; k++) {
        if (tmps[k])
            remove(tmps[k]);
    }
    if (rc != CLI_OK && made)
        unmake_dir(out_dir, made);
    free(made);
    for (i = 0; paths && i < nb; i++)
        free(paths[i]);
    for (i = 0; tmps && i < nb; i++)
        free(tmps[i]);
    free(paths);
    free(tmps);
    return rc;
}

/* Write every output of the last run of exec into out_dir. */
int cli_write_outputs(const char *out_dir, mica_context_t *ctx,
                      mica_engine_t *engine, mica_exec_t *exec)
{
    int32_t nb, i;
    int32_t *tensors = output_tensors(engine, &nb);
    int rc = CLI_ERROR;
    char profile[32] = "";
    mica_tensor_desc_t *desc = calloc((size_t)nb + 1, sizeof(*desc));
    const void **data = calloc((size_t)nb + 1, sizeof(void *));
    const char **names = calloc((size_t)nb + 1, sizeof(char *));

    if (!tensors || !desc || !data || !names) {
        cli_error("out of memory");
        goto out;
    }
    for (i = 0; i < nb; i++) {
        mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_engine_tensor(engine, tensors[i], &info) != MICA_OK) {
            cli_error("cannot query output tensor %d of the engine",
                      (int)tensors[i]);
            goto out;
        }
        names[i] = info.name;
        if (mica_exec_get_output(exec, info.name, &desc[i], &data[i])
            != MICA_OK) {
            cli_error("output '%s': %s", info.name, mica_context_error(ctx));
            goto out;
        }
    }
    if (mica_engine_nb_profiles(engine))
        snprintf(profile, sizeof profile, "profile: %d",
                 (int)mica_exec_profile(exec));
    rc = cli_write_npys(out_dir, nb, names, desc, data, profile);
out:
    free(desc);
    free(data);
    free(names);
    free(tensors);
    return rc;
}
