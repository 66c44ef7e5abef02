/*
 * tools/cmd_compare.c - `mica compare`: build one model (a manifest or an
 * ONNX model) in two configurations, A the reference and B the one under
 * test, run both once on the same inputs (given, or seeded random values)
 * and report, per network output, the absolute and relative errors of B
 * against A (tools/compare_diff.c); status 1 on a mismatch.
 *
 * A configuration is a comma-separated list: device=auto|cpu|cuda,
 * prefer=TYPE=IMPL (repeatable), fp16, autotune, no-fusion,
 * passes=NAME|all|none and no-passes=NAME (each repeatable: the graph
 * passes, docs/passes.md; `--a passes=none` compares the network as
 * written with what the passes made of it); or one of: reference (every
 * layer on its CPU reference implementation, no passes), onnxruntime
 * [=PATH] (tools/compare_ort.c), outputs=DIR (saved .npy files).  A
 * defaults to "reference", B to "" (the manifest's own choices); --passes
 * and --no-passes apply to both, where a configuration says nothing of
 * its own.
 *
 * --all-layers compares every intermediate tensor too, and names the
 * first layer, in execution order, whose output diverges.  It marks every
 * tensor computed at top level (outside loops and conditionals, whose
 * tensors change per trip or branch) as a network output before both
 * builds: mica_network_mark_output, the public API, nothing added to the
 * executor.  This keeps those tensors out of memory reuse (and, once
 * fusion exists, out of fused layers), as marking them does in TensorRT
 * and Polygraphy.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "inputs.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica compare MANIFEST|MODEL.onnx [--a CONFIG] [--b CONFIG]\n"
        "                    [--atol X] [--rtol X] [--all-layers]\n"
        "                    [--save-outputs DIR]\n"
        "                    [--input NAME=FILE.npy|NAME=random]... [--seed N]\n"
        "                    [--shapes NAME:AxB,...] [--profile K]\n"
        "                    [--passes NAME,...] [--no-passes NAME,...]\n"
        "                    [--module-path DIR]... [--threads N]\n\n"
        "Build the model in two configurations, run both once on the same\n"
        "inputs (given, or seeded random values) and report, per output, the\n"
        "max, mean, median and 99th percentile of the absolute and relative\n"
        "errors of B against A.  An element fails only when it is beyond both\n"
        "tolerances (as Polygraphy checks); any failure makes the status 1.\n\n"
        "A CONFIG is a comma-separated list of\n"
        "  reference         every layer on its CPU reference, no graph\n"
        "                    passes (alone)\n"
        "  onnxruntime[=PATH]  ONNX Runtime (an ONNX model; alone): the\n"
        "                    library PATH (a file or folder), else\n"
        "                    $MICA_ONNXRUNTIME, libonnxruntime.so, or the\n"
        "                    onnxruntime wheel of ${MICA_PYTHON:-python3}\n"
        "  outputs=DIR       the .npy files of DIR (alone), as 'mica run\n"
        "                    --output-dir' and --save-outputs write them\n"
        "  device=D          auto, cpu or cuda (default: the manifest's)\n"
        "  prefer=TYPE=IMPL  implementation IMPL for layers of TYPE that do\n"
        "                    not pin one (repeatable)\n"
        "  fp16              let layers run in float16\n"
        "  autotune          time the implementations and keep the fastest\n"
        "  no-fusion         fuse nothing\n"
        "  passes=NAME       run graph pass NAME (repeatable; all, none):\n"
        "                    these only\n"
        "  no-passes=NAME    do not run graph pass NAME (repeatable; all)\n"
        "A is 'reference' unless given, B '' (the\n"
        "manifest's own choices).  --passes and --no-passes NAME,... apply\n"
        "to both where a configuration names none of its own.\n\n"
        "  --atol X          absolute tolerance (default 1e-5)\n"
        "  --rtol X          relative tolerance, of |A| (default 1e-5)\n"
        "  --all-layers      compare every tensor computed outside loops and\n"
        "                    conditionals, and name the first layer whose\n"
        "                    output diverges\n"
        "  --save-outputs DIR  the network outputs of A and B (each that\n"
        "                    ran) as DIR/A/NAME.npy and DIR/B/NAME.npy\n"
        "  --input, --seed, --shapes, --profile, --module-path, --threads:\n"
        "                         as 'mica run'\n\n"
        "Example: mica compare net.yaml --a device=cpu --b device=cuda,fp16 \\\n"
        "             --atol 1e-2 --rtol 1e-2\n");
}

typedef struct config {
    const char *text;           /* as given, for the report */
    int device_set;
    uint32_t device;
    char prefer[1024];          /* "Type=impl,..." */
    int fp16, autotune, no_fusion;
    char passes[512];           /* "NAME,...": passes=, "" if none */
    char no_passes[512];        /* no-passes= */
    int reference;              /* every layer on its reference */
    int runner;                 /* RUN_MICA, RUN_ORT or RUN_SAVED */
    const char *arg;            /* onnxruntime=PATH, outputs=DIR */
    char arg_buf[4096];
} config_t;

enum { RUN_MICA, RUN_ORT, RUN_SAVED };

typedef struct compare {
    const char *source;
    config_t cfg[2];
    double atol, rtol;
    int all_layers;
    long profile;
    char **paths;
    int nb_paths;
    cli_inputs_t inputs;
    const char *save_dir;       /* --save-outputs */
} compare_t;

/* One item list of --a or --b. */
static int parse_config(const char *opt, const char *v, config_t *c)
{
    const char *p = v;

    memset(c, 0, sizeof *c);
    c->text = v;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[512];
        if (n >= sizeof item)
            return cli_usage_error("compare", "%s: item '%.40s...' is too "
                                   "long", opt, p);
        memcpy(item, p, n);
        item[n] = '\0';
        if (!strncmp(item, "device=", 7)) {
            if (cli_parse_device(item + 7, &c->device))
                return cli_usage_error("compare", "%s: device '%s': expected "
                                       "%s", opt, item + 7,
                                       cli_device_choices());
            c->device_set = 1;
        } else if (!strncmp(item, "prefer=", 7)) {
            const char *eq = strchr(item + 7, '=');
            size_t len = strlen(c->prefer);
            if (!eq || eq == item + 7 || !eq[1])
                return cli_usage_error("compare", "%s: '%s': expected "
                                       "prefer=TYPE=IMPL", opt, item);
            if (len + n + 2 > sizeof c->prefer)
                return cli_usage_error("compare", "%s: too many prefer "
                                       "items", opt);
            snprintf(c->prefer + len, sizeof c->prefer - len, "%s%s",
                     len ? "," : "", item + 7);
        } else if (!strcmp(item, "onnxruntime") ||
                   !strncmp(item, "onnxruntime=", 12)) {
            c->runner = RUN_ORT;
            if (item[11] == '=') {
                snprintf(c->arg_buf, sizeof c->arg_buf, "%s", item + 12);
                c->arg = c->arg_buf;
            }
        } else if (!strncmp(item, "outputs=", 8)) {
            if (!item[8])
                return cli_usage_error("compare", "%s: 'outputs=': expected "
                                       "a folder of .npy files", opt);
            c->runner = RUN_SAVED;
            snprintf(c->arg_buf, sizeof c->arg_buf, "%s", item + 8);
            c->arg = c->arg_buf;
        } else if (!strcmp(item, "reference")) {
            c->reference = 1;
        } else if (!strcmp(item, "fp16")) {
            c->fp16 = 1;
        } else if (!strcmp(item, "autotune")) {
            c->autotune = 1;
        } else if (!strcmp(item, "no-fusion")) {
            c->no_fusion = 1;
        } else if (!strncmp(item, "passes=", 7) ||
                   !strncmp(item, "no-passes=", 10)) {
            int no = item[0] == 'n';
            const char *name = item + (no ? 10 : 7);
            char *list = no ? c->no_passes : c->passes;
            size_t len = strlen(list);
            if (!*name)
                return cli_usage_error("compare", "%s: '%s': expected a "
                                       "pass name, all or none", opt, item);
            if (len + strlen(name) + 2 > sizeof c->passes)
                return cli_usage_error("compare", "%s: too many pass names",
                                       opt);
            snprintf(list + len, sizeof c->passes - len, "%s%s",
                     len ? "," : "", name);
        } else if (n) {
            return cli_usage_error("compare", "%s: unknown item '%s' "
                                   "(reference, device=D, prefer=TYPE=IMPL, "
                                   "fp16, autotune, no-fusion, passes=NAME, "
                                   "no-passes=NAME, onnxruntime[=PATH], "
                                   "outputs=DIR)", opt, item);
        }
        p = end ? end + 1 : NULL;
    }
    if ((c->runner || c->reference) &&
        (c->device_set || c->prefer[0] || c->fp16 || c->autotune ||
         c->no_fusion || c->passes[0] || c->no_passes[0] ||
         (c->runner && c->reference)))
        return cli_usage_error("compare", "%s '%s': %s takes no other item",
                               opt, v,
                               c->runner == RUN_ORT ? "onnxruntime"
                               : c->runner ? "outputs=DIR" : "reference");
    return CLI_OK;
}

static int tolerance(const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (errno || *end || end == v || !(*out >= 0))
        return cli_usage_error("compare", "%s '%s': expected a non-negative "
                               "number", opt, v);
    return CLI_OK;
}

static int parse(compare_t *c, int argc, char **argv, int *help)
{
    int i, taken;
    const char *v;
    char *end;

    *help = 0;
    c->atol = c->rtol = 1e-5;
    c->profile = -1;
    if (parse_config("--a", "reference", &c->cfg[0]) != CLI_OK ||
        parse_config("--b", "", &c->cfg[1]) != CLI_OK)
        return CLI_USAGE;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            *help = 1;
            return CLI_OK;
        } else if (cli_inputs_option("compare", argc, argv, &i, &taken,
                                     &c->inputs) != CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_threads_option("compare", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_onnx_option("compare", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_passes_option("compare", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_is_opt(a, "--a") || cli_is_opt(a, "--b")) {
            int k = a[2] == 'b';
            if (!(v = cli_opt_value("compare", argc, argv, &i, k ? "--b"
                                                                  : "--a")) ||
                parse_config(k ? "--b" : "--a", v, &c->cfg[k]) != CLI_OK)
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--atol") || cli_is_opt(a, "--rtol")) {
            int r = a[2] == 'r';
            const char *opt = r ? "--rtol" : "--atol";
            if (!(v = cli_opt_value("compare", argc, argv, &i, opt)) ||
                tolerance(opt, v, r ? &c->rtol : &c->atol) != CLI_OK)
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--save-outputs")) {
            if (!(c->save_dir = cli_opt_value("compare", argc, argv, &i,
                                              "--save-outputs")))
                return CLI_USAGE;
        } else if (!strcmp(a, "--all-layers")) {
            c->all_layers = 1;
        } else if (cli_is_opt(a, "--profile")) {
            if (!(v = cli_opt_value("compare", argc, argv, &i, "--profile")))
                return CLI_USAGE;
            errno = 0;
            c->profile = strtol(v, &end, 10);
            if (errno || *end || end == v || c->profile < 0)
                return cli_usage_error("compare", "--profile '%s': expected "
                                       "a profile number (0, 1, ...)", v);
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("compare", argc, argv, &i,
                                    "--module-path")))
                return CLI_USAGE;
            c->paths[c->nb_paths++] = (char *)v;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("compare", "unknown option '%s'", a);
        } else if (!c->source) {
            c->source = a;
        } else {
            return cli_usage_error("compare", "unexpected argument '%s' (one "
                                   "model only; configurations go in --a "
                                   "and --b)", a);
        }
    }
    if (!c->source)
        return cli_usage_error("compare", "no manifest or model given");
    if (c->cfg[0].runner && c->cfg[1].runner)
        return cli_usage_error("compare", "--a and --b are both reference "
                               "runners: one must be mica");
    if (c->all_layers && (c->cfg[0].runner || c->cfg[1].runner))
        return cli_usage_error("compare", "--all-layers compares two mica "
                               "configurations (onnxruntime and outputs= "
                               "give the network outputs only)");
    return CLI_OK;
}

/*
 * The prefer lists that put every layer type of m's network with a CPU
 * reference implementation on it: the types of a plain CPU build (no
 * passes, so no fused types), each once.  *types and *nb malloc'd.
 */
static int reference_types(mica_context_t *ctx, mica_manifest_t *m,
                           mica_build_config_t cfg, const char ***types,
                           int32_t *nb)
{
    mica_engine_t *probe = NULL;
    int32_t i, j, n;

    *types = NULL;
    *nb = 0;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &probe) != MICA_OK)
        return cli_error("A: %s", mica_context_error(ctx));
    n = mica_engine_nb_layers(probe);
    if (!(*types = calloc((size_t)n + 1, sizeof **types))) {
        mica_engine_destroy(probe);
        return cli_error("out of memory");
    }
    for (i = 0; i < n; i++) {
        mica_layer_info_t l;
        mica_creator_info_t info;
        memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_layer(probe, i, &l) != MICA_OK ||
            mica_registry_find(ctx, l.ns, l.type, l.version, "reference",
                               MICA_DEVICE_CPU, &info) != MICA_OK)
            continue;
        for (j = 0; j < *nb && strcmp((*types)[j], info.type); j++)
            ;
        if (j == *nb) /* the registry's string: it outlives the probe */
            (*types)[(*nb)++] = info.type;
    }
    mica_engine_destroy(probe);
    return CLI_OK;
}

/*
 * Build the network of m in configuration c; `plain`: without graph
 * passes (the network as written: --all-layers's marks).  `reference`:
 * on the CPU, no passes, every layer that pins no implementation on its
 * reference one.
 */
static int build(mica_context_t *ctx, mica_manifest_t *m, const config_t *c,
                 const char *which, int plain, mica_engine_t **engine)
{
    mica_build_config_t cfg = *mica_manifest_config(m);
    char no_passes[1600];
    const char **types = NULL, **impls = NULL;
    int32_t nb = 0, i;
    int rc = CLI_OK;

    *engine = NULL;
    cfg.struct_size = sizeof cfg;
    if (c->device_set)
        cfg.device = c->device;
    cfg.autotune = c->autotune;
    cfg.no_fusion = c->no_fusion;
    cli_passes_config(&cfg); /* --passes, --no-passes: both */
    if (c->passes[0])
        cfg.passes = c->passes;
    if (c->no_passes[0]) {
        snprintf(no_passes, sizeof no_passes, "%s%s%s",
                 cfg.no_passes ? cfg.no_passes : "",
                 cfg.no_passes ? "," : "", c->no_passes);
        cfg.no_passes = no_passes;
    }
    if (c->fp16)
        cfg.precisions |= 1u << MICA_FLOAT16;
    if (plain || c->reference) {
        cfg.passes = "none";
        cfg.no_passes = NULL;
        cfg.no_fusion = 1;
    }
    if (mica_context_set_prefer(ctx, c->prefer[0] ? c->prefer : NULL) !=
        MICA_OK)
        return cli_error("%s: %s", which, mica_context_error(ctx));
    if (c->reference) {
        cfg.device = MICA_DEVICE_CPU;
        cfg.autotune = -1;
        if ((rc = reference_types(ctx, m, cfg, &types, &nb)) != CLI_OK)
            goto out;
        if (!(impls = calloc((size_t)nb + 1, sizeof *impls))) {
            rc = cli_error("out of memory");
            goto out;
        }
        for (i = 0; i < nb; i++)
            impls[i] = "reference";
        cfg.nb_prefer = nb;
        cfg.prefer_types = types;
        cfg.prefer_impls = impls;
    }
    if (mica_engine_build(mica_manifest_network(m), &cfg, engine) != MICA_OK) {
        *engine = NULL;
        rc = cli_error("%s: %s", which, mica_context_error(ctx));
    }
out:
    free(types);
    free(impls);
    return rc;
}

/* Run engine once on the inputs; *exec keeps the outputs. */
static int run_once(mica_context_t *ctx, mica_engine_t *engine,
                    const compare_t *c, const char *which, mica_exec_t **exec)
{
    mica_status_t st = mica_exec_create(engine, exec);
    if (st == MICA_OK)
        st = cli_exec_threads(*exec);
    if (st == MICA_OK && c->profile >= 0 && mica_engine_nb_profiles(engine))
        st = mica_exec_set_profile(*exec, (int32_t)c->profile);
    if (st == MICA_OK)
        st = cli_inputs_set(&c->inputs, *exec);
    if (st == MICA_OK)
        st = mica_exec_run(*exec);
    if (st != MICA_OK)
        return cli_error("%s: %s", which, mica_context_error(ctx));
    return CLI_OK;
}

/* The network's own outputs of the engine built without marks. */
static char **own_outputs(mica_engine_t *engine)
{
    int32_t i, nb = mica_engine_nb_outputs(engine);
    char **v = calloc((size_t)nb + 1, sizeof *v);
    for (i = 0; v && i < nb; i++) {
        mica_tensor_info_t t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        if (mica_engine_tensor(engine, mica_engine_output(engine, i), &t) !=
                MICA_OK ||
            !(v[i] = strdup(t.name))) {
            while (i-- > 0)
                free(v[i]);
            free(v);
            return NULL;
        }
    }
    return v;
}

static int open_model(mica_context_t *ctx, const char *path,
                      mica_manifest_t **m)
{
    if (mica_engine_file_probe(path))
        return cli_error("%s: an engine file is built for one configuration; "
                         "compare builds the model twice: give its manifest "
                         "or ONNX model", path);
    if (cli_onnx_probe(path))
        return cli_onnx_manifest(ctx, path, m);
    if (mica_manifest_load(ctx, path, m) != MICA_OK)
        return cli_error("%s", mica_context_error(ctx));
    return CLI_OK;
}

/* What configuration c is, for the report. */
static const char *config_text(const config_t *c)
{
    return c->text[0] ? c->text : "the manifest's choices";
}

/* --save-outputs: the network outputs `outs` of side s into DIR/A or
 * DIR/B. */
static int save_side(mica_context_t *ctx, compare_side_t *s,
                     const char *dir, char *const *outs)
{
    int32_t n = 0, k;
    mica_tensor_desc_t *d;
    const void **data;
    char *path = malloc(strlen(dir) + 3);
    int rc = CLI_ERROR;

    for (; outs[n]; n++)
        ;
    d = calloc((size_t)n + 1, sizeof *d);
    data = calloc((size_t)n + 1, sizeof *data);
    if (!d || !data || !path) {
        cli_error("out of memory");
        goto out;
    }
    sprintf(path, "%s/%s", dir, s->which);
    for (k = 0; k < n; k++)
        if (compare_get(ctx, s, outs[k], &d[k], &data[k]) != CLI_OK)
            goto out;
    if ((rc = cli_write_npys(path, n, (const char *const *)outs, d, data,
                             NULL)) == CLI_OK)
        printf("%s: %d output%s saved in %s\n", s->which, (int)n,
               n == 1 ? "" : "s", path);
out:
    free(path);
    free(d);
    free(data);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    compare_t c;
    int rc, help, k, mk, failed = 0, nb_failed = 0, marked = 0;
    mica_context_t *ctx = NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *e[2] = {NULL, NULL}, *probe = NULL;
    mica_exec_t *x[2] = {NULL, NULL};
    compare_side_t side[2];
    config_t reference;
    compare_origin_t origin;
    char **outs = NULL;
    static const char *const which[2] = {"A", "B"};

    memset(&c, 0, sizeof c);
    memset(side, 0, sizeof side);
    memset(&origin, 0, sizeof origin);
    side[0].which = which[0];
    side[1].which = which[1];
    if (!(c.paths = calloc((size_t)argc + 1, sizeof(char *)))) {
        rc = cli_error("out of memory");
        goto out;
    }
    if ((rc = parse(&c, argc, argv, &help)) != CLI_OK)
        goto out;
    if (help) {
        usage(stdout);
        goto out;
    }
    mk = c.cfg[0].runner ? 1 : 0; /* the side mica runs for certain */
    parse_config("--a", "reference", &reference);
    if ((rc = cli_inputs_read(&c.inputs)) != CLI_OK ||
        (rc = cli_context(&ctx, c.paths, c.nb_paths, 0)) != CLI_OK ||
        (rc = open_model(ctx, c.source, &m)) != CLI_OK)
        goto out;
    for (k = 0; k < 2; k++)
        if (c.cfg[k].runner == RUN_ORT && !cli_onnx_probe(c.source)) {
            rc = cli_error("%s: onnxruntime runs ONNX models: %s is a "
                           "manifest", which[k], c.source);
            goto out;
        }
    /* The network as written, every layer on its reference (no passes,
     * no reorders between formats): its outputs, and --all-layers's
     * tensors to mark. */
    if ((rc = build(ctx, m, &reference, which[mk], 1, &probe)) != CLI_OK)
        goto out;
    if (!(outs = own_outputs(probe))) {
        rc = cli_error("out of memory");
        goto out;
    }
    if (c.all_layers &&
        (rc = compare_mark_all(ctx, m, probe, &marked)) != CLI_OK)
        goto out;
    mica_engine_destroy(probe);
    probe = NULL;
    for (k = 0; k < 2; k++)
        if (!c.cfg[k].runner &&
            (rc = build(ctx, m, &c.cfg[k], which[k], 0, &e[k])) != CLI_OK)
            goto out;
    if ((rc = cli_inputs_complete(&c.inputs, e[mk], c.profile,
                                  cli_onnx_shapes())) != CLI_OK)
        goto out;
    printf("compare %s\n", c.source);
    for (k = 0; k < 2; k++) {
        if (c.cfg[k].runner)
            printf("%s: %s\n", which[k], config_text(&c.cfg[k]));
        else
            printf("%s: %s (engine on %s)\n", which[k],
                   config_text(&c.cfg[k]),
                   cli_device_name(mica_engine_device(e[k])));
    }
    if (e[0] && e[1])
        compare_print_choices(e);
    cli_inputs_print(&c.inputs, stdout, 1);
    printf("\n");
    for (k = 0; k < 2; k++) {
        if (c.cfg[k].runner == RUN_ORT) {
            if ((rc = compare_ort_run(which[k], c.cfg[k].arg, c.source,
                                      &c.inputs, (int)cli_threads(),
                                      &side[k])) != CLI_OK)
                goto out;
        } else if (c.cfg[k].runner == RUN_SAVED) {
            side[k].dir = c.cfg[k].arg;
        } else if ((rc = run_once(ctx, e[k], &c, which[k], &x[k])) !=
                   CLI_OK) {
            goto out;
        } else {
            side[k].exec = x[k];
        }
    }
    for (k = 0; c.save_dir && k < 2; k++)
        if (c.cfg[k].runner != RUN_SAVED &&
            (rc = save_side(ctx, &side[k], c.save_dir, outs)) != CLI_OK)
            goto out;
    if (c.all_layers && cli_onnx_probe(c.source) &&
        (rc = compare_origin_read(ctx, c.source, &origin)) != CLI_OK)
        goto out;
    if (c.all_layers &&
        (rc = compare_layers(ctx, e, side, origin.nb ? &origin : NULL,
                             c.atol, c.rtol, &failed)) != CLI_OK)
        goto out;
    for (k = 0; outs[k]; k++) {
        mica_tensor_desc_t da;
        diff_t d;
        if ((rc = compare_named(ctx, side, outs[k], c.atol, c.rtol, &da,
                                &d)) != CLI_OK)
            goto out;
        diff_print(stdout, "output", outs[k], &da, &d, c.atol, c.rtol);
        nb_failed += diff_failed(&d);
    }
    if (nb_failed || failed) {
        printf("FAIL: %d of %d outputs differ%s\n", nb_failed, k,
               failed ? "; a layer diverges (above)" : "");
        rc = CLI_ERROR;
    } else {
        printf("PASS: %d output%s match%s", k, k == 1 ? "" : "s",
               k == 1 ? "es" : "");
        if (c.all_layers)
            printf(", and %d intermediate tensors", marked);
        printf("\n");
    }
out:
    for (k = 0; k < 2; k++) {
        if (x[k])
            mica_exec_destroy(x[k]);
        if (e[k])
            mica_engine_destroy(e[k]);
        compare_side_free(&side[k]);
    }
    if (probe)
        mica_engine_destroy(probe);
    compare_origin_free(&origin);
    if (m)
        mica_manifest_destroy(m);
    if (ctx)
        mica_context_destroy(ctx);
    for (k = 0; outs && outs[k]; k++)
        free(outs[k]);
    free(outs);
    cli_inputs_free(&c.inputs);
    free(c.paths);
    return rc;
}
