/*
 * tools/cli.c - helpers shared by the subcommands of `mica`.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("mica: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_ERROR;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mica %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'mica %s --help')\n", cmd);
    return CLI_USAGE;
}

int cli_is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

const char *cli_opt_value(const char *cmd, int argc, char **argv, int *i,
                          const char *name)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option %s needs a value", name);
        return NULL;
    }
    return argv[++*i];
}

int cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int cli_parse_device(const char *s, uint32_t *out)
{
    return mica_device_parse(s, out) == MICA_OK ? 0 : -1;
}

const char *cli_device_choices(void)
{
    static char buf[256];
    const char *last = NULL, *name;
    size_t pos = (size_t)snprintf(buf, sizeof buf, "auto");
    uint32_t bit;

    /* Every name before the last one with ", ", the last with " or ". */
    for (bit = 1; bit; bit <<= 1) {
        if (!(name = mica_device_name(bit)))
            continue;
        if (last && pos < sizeof buf)
            pos += (size_t)snprintf(buf + pos, sizeof buf - pos, ", %s", last);
        last = name;
    }
    if (last && pos < sizeof buf)
        snprintf(buf + pos, sizeof buf - pos, " or %s", last);
    return buf;
}

const char *cli_device_name(uint32_t devices)
{
    static char buf[256];
    const char *name;
    size_t pos = 0;
    uint32_t bit;

    if ((name = mica_device_name(devices)) != NULL)
        return name; /* one device: the library's string */
    buf[0] = '\0';
    for (bit = 1; bit; bit <<= 1)
        if ((devices & bit) && (name = mica_device_name(bit)) != NULL &&
            pos < sizeof buf)
            pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%s",
                                    pos ? "," : "", name);
    return pos ? buf : "-";
}

static void quiet_log(void *user, mica_log_level_t level, const char *msg)
{
    (void)user;
    if (level == MICA_LOG_ERROR)
        fprintf(stderr, "mica: error: %s\n", msg);
}

const char *cli_dims_str(const mica_dims_t *d, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    int32_t i;
    for (i = 0; i < d->nb_dims && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "",
                              (long long)d->d[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

/* Deploy-time implementation choices from --prefer, "Type=impl,...". */
static char prefer[1024];
/* --autotune (1), --no-autotune (-1), and --fp16. */
static int autotune, fp16;
/* --timing-cache FILE */
static const char *timing_cache;
/* --no-fusion */
static int no_fusion;
/* --passes, --no-passes: comma-separated pass names, each option's
 * values joined */
static char passes[1024], no_passes[1024];
/* --allow-manifest-modules */
static int manifest_modules;

/* --threads, -1 if not given */
static long threads = -1;

int cli_threads_option(const char *cmd, int argc, char **argv, int *i,
                       int *taken)
{
    const char *v;
    char *end;

    *taken = 0;
    if (!cli_is_opt(argv[*i], "--threads"))
        return CLI_OK;
    *taken = 1;
    if (!(v = cli_opt_value(cmd, argc, argv, i, "--threads")))
        return CLI_USAGE;
    errno = 0;
    threads = strtol(v, &end, 10);
    if (errno || *end || end == v || threads < 1 || threads > 4096)
        return cli_usage_error(cmd, "--threads '%s': expected a count of "
                               "threads from 1 to 4096", v);
    return CLI_OK;
}

long cli_threads(void)
{
    return threads;
}

mica_status_t cli_exec_threads(mica_exec_t *exec)
{
    return threads < 0 ? MICA_OK
                       : mica_exec_set_threads(exec, (int32_t)threads);
}

void cli_set_allow_manifest_modules(int on)
{
    manifest_modules = on;
}

void cli_set_autotune(int on)
{
    autotune = on;
}

void cli_set_no_fusion(int on)
{
    no_fusion = on;
}

int cli_passes_option(const char *cmd, int argc, char **argv, int *i,
                      int *taken)
{
    const char *a = argv[*i], *v;
    int no = cli_is_opt(a, "--no-passes");
    char *list = no ? no_passes : passes;
    size_t n = strlen(list);

    *taken = 0;
    if (!no && !cli_is_opt(a, "--passes"))
        return CLI_OK;
    *taken = 1;
    if (!(v = cli_opt_value(cmd, argc, argv, i, no ? "--no-passes"
                                                   : "--passes")))
        return CLI_USAGE;
    if (!v[0])
        return cli_usage_error(cmd, "%s: expected pass names (NAME,...), "
                               "all or none", no ? "--no-passes"
                                                 : "--passes");
    if (n + strlen(v) + 2 > sizeof passes)
        return cli_usage_error(cmd, "too many pass names");
    snprintf(list + n, sizeof passes - n, "%s%s", n ? "," : "", v);
    return CLI_OK;
}

void cli_passes_config(mica_build_config_t *cfg)
{
    cfg->passes = passes[0] ? passes : NULL;
    cfg->no_passes = no_passes[0] ? no_passes : NULL;
}

void cli_set_fp16(int on)
{
    fp16 = on;
}

int cli_fp16(void)
{
    return fp16;
}

int cli_autotune(void)
{
    return autotune;
}

int cli_tune_option(const char *cmd, int argc, char **argv, int *i,
                    int *taken)
{
    const char *v;

    *taken = 1;
    if (cli_is_opt(argv[*i], "--autotune")) {
        autotune = 1;
    } else if (cli_is_opt(argv[*i], "--no-autotune")) {
        autotune = -1;
    } else if (cli_is_opt(argv[*i], "--timing-cache")) {
        if (!(v = cli_opt_value(cmd, argc, argv, i, "--timing-cache")))
            return CLI_USAGE;
        if (timing_cache)
            return cli_usage_error(cmd, "--timing-cache is given twice");
        if (!v[0])
            return cli_usage_error(cmd, "--timing-cache needs a file name");
        timing_cache = v;
    } else {
        *taken = 0;
    }
    return CLI_OK;
}

int cli_add_prefer(const char *cmd, const char *v)
{
    const char *eq = strchr(v, '=');
    size_t n = strlen(prefer);

    if (!eq || eq == v || !eq[1] || strchr(v, ','))
        return cli_usage_error(cmd, "--prefer '%s': expected Type=implementation",
                               v);
    if (n + strlen(v) + 2 > sizeof prefer)
        return cli_usage_error(cmd, "too many --prefer choices");
    snprintf(prefer + n, sizeof prefer - n, "%s%s", n ? "," : "", v);
    return CLI_OK;
}

/* --allow-folder DIR (cli_onnx_option), applied by cli_context. */
static const char *folders[64];
static int nb_folders;

int cli_add_folder(const char *cmd, const char *dir)
{
    if (!dir[0])
        return cli_usage_error(cmd, "--allow-folder needs a folder");
    if (nb_folders == (int)(sizeof folders / sizeof *folders))
        return cli_usage_error(cmd, "too many --allow-folder");
    folders[nb_folders++] = dir;
    return CLI_OK;
}

int cli_context(mica_context_t **ctx, char **paths, int nb_paths, int quiet)
{
    mica_status_t st;
    int i;

    st = mica_context_create(ctx);
    if (st == MICA_ERR_INVALID)
        return CLI_ERROR; /* the library said why ($MICA_LOG_LEVEL) */
    if (st != MICA_OK)
        return cli_error("cannot create a context: %s", mica_status_name(st));
    if (quiet)
        mica_context_set_logger(*ctx, quiet_log, NULL, MICA_LOG_ERROR);
    mica_context_allow_manifest_modules(*ctx, manifest_modules);
    if (prefer[0] && (st = mica_context_set_prefer(*ctx, prefer)) != MICA_OK)
        goto fail;
    for (i = 0; i < nb_folders; i++)
        if ((st = mica_context_allow_folder(*ctx, folders[i])) != MICA_OK)
            goto fail;
    st = mica_context_load_default_modules(*ctx);
    if (st != MICA_OK)
        goto fail;
    for (i = 0; i < nb_paths; i++) {
        st = mica_context_load_dir(*ctx, paths[i]);
        if (st != MICA_OK)
            goto fail;
    }
    return CLI_OK;
fail:
    cli_error("%s", mica_context_error(*ctx));
    mica_context_destroy(*ctx);
    *ctx = NULL;
    return CLI_ERROR;
}

int cli_build(mica_context_t *ctx, const char *manifest, uint32_t device,
              mica_manifest_t **m, mica_engine_t **engine)
{
    mica_build_config_t cfg;
    mica_status_t st;

    *engine = NULL;
    if (cli_onnx_probe(manifest)) {
        /* An ONNX model, imported in memory (cli_onnx.c). */
        if (cli_onnx_manifest(ctx, manifest, m) != CLI_OK)
            return CLI_ERROR;
    } else {
        st = mica_manifest_load(ctx, manifest, m);
        if (st != MICA_OK)
            return cli_error("%s", mica_context_error(ctx));
    }
    cfg = *mica_manifest_config(*m);
    if (device != CLI_DEVICE_MANIFEST)
        cfg.device = device;
    cfg.struct_size = sizeof cfg;
    cfg.autotune = autotune;
    cfg.timing_cache = timing_cache;
    cfg.no_fusion = no_fusion;
    cli_passes_config(&cfg);
    if (fp16)
        cfg.precisions |= 1u << MICA_FLOAT16;
    st = mica_engine_build(mica_manifest_network(*m), &cfg, engine);
    if (st != MICA_OK) {
        cli_error("%s", mica_context_error(ctx));
        mica_manifest_destroy(*m);
        *m = NULL;
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cli_open(mica_context_t *ctx, const char *path, uint32_t device,
             cli_source_t *src)
{
    mica_status_t st;
    uint32_t built;

    memset(src, 0, sizeof(*src));
    src->path = path;
    if (!mica_engine_file_probe(path))
        return cli_build(ctx, path, device, &src->m, &src->engine);
    src->is_engine = 1;
    st = mica_engine_load(ctx, path, &src->engine);
    if (st != MICA_OK) {
        src->engine = NULL;
        return cli_error("%s", mica_context_error(ctx));
    }
    built = mica_engine_device(src->engine);
    if (device != CLI_DEVICE_MANIFEST && device != 0 && device != built) {
        cli_error("%s: the engine was built for %s and runs there only, not "
                  "on %s (build one for %s with 'mica build MANIFEST -o "
                  "ENGINE --device %s')", path, cli_device_name(built),
                  cli_device_name(device), cli_device_name(device),
                  cli_device_name(device));
        cli_close(src);
        return CLI_ERROR;
    }
    return CLI_OK;
}

const char *cli_source_name(const cli_source_t *src)
{
    return src->m ? mica_manifest_name(src->m) : "";
}

void cli_close(cli_source_t *src)
{
    if (src->engine)
        mica_engine_destroy(src->engine);
    if (src->m)
        mica_manifest_destroy(src->m);
    src->engine = NULL;
    src->m = NULL;
}

/* ---- tables ------------------------------------------------------------ */

struct cli_table {
    int nb_cols;
    int nb_rows;
    char **cells; /* nb_rows * nb_cols */
};

cli_table_t *cli_table_new(int nb_cols)
{
    cli_table_t *t = calloc(1, sizeof(*t));
    if (t)
        t->nb_cols = nb_cols;
    return t;
}

int cli_table_add(cli_table_t *t, const char *const *cells)
{
    char **p;
    int i;
    p = realloc(t->cells, (size_t)(t->nb_rows + 1) * (size_t)t->nb_cols
                              * sizeof(char *));
    if (!p)
        return -1;
    t->cells = p;
    for (i = 0; i < t->nb_cols; i++) {
        p[t->nb_rows * t->nb_cols + i] = strdup(cells[i] ? cells[i] : "");
        if (!p[t->nb_rows * t->nb_cols + i]) {
            while (i-- > 0)
                free(p[t->nb_rows * t->nb_cols + i]);
            return -1;
        }
    }
    t->nb_rows++;
    return 0;
}

void cli_table_print(const cli_table_t *t, FILE *f, const char *indent)
{
    int r, c;
    size_t *w = calloc((size_t)t->nb_cols, sizeof(size_t));
    if (!w)
        return;
    for (r = 0; r < t->nb_rows; r++)
        for (c = 0; c < t->nb_cols; c++) {
            size_t n = strlen(t->cells[r * t->nb_cols + c]);
            if (n > w[c])
                w[c] = n;
        }
    for (r = 0; r < t->nb_rows; r++) {
        fputs(indent, f);
        for (c = 0; c < t->nb_cols; c++) {
            const char *s = t->cells[r * t->nb_cols + c];
            if (c == t->nb_cols - 1)
                fprintf(f, "%s\n", s);
            else
                fprintf(f, "%-*s  ", (int)w[c], s);
        }
    }
    free(w);
}

void cli_table_free(cli_table_t *t)
{
    int i;
    if (!t)
        return;
    for (i = 0; i < t->nb_rows * t->nb_cols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}
