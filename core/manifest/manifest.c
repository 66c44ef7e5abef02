/*
 * core/manifest/manifest.c - mica_manifest_load and friends: the top level
 * of a manifest (`mica`, `name`, `device`, `precision`, `modules`), the
 * order in which the sections are read, and the final validation of the
 * network.  See the manifest format in the project's documentation.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"
#include "device.h"

static const char *const top_keys[] = {
    "mica", "name", "device", "precision", "modules", "inputs", "profiles",
    "weights", "layers", "outputs", "shape_outputs", "scales", NULL};
static const char *const module_keys[] = {"paths", "load", "prefer", NULL};

/* ---- top-level fields ------------------------------------------------- */

static mica_status_t version(mica__mf_t *mf, yaml_node_t *root)
{
    yaml_node_t *v = mica__mf_get(mf, root, "mica", NULL);
    int64_t n;
    char d[64];
    if (!v)
        return mica__mf_fail(mf, root, "missing 'mica: 1' (the format "
                             "version) at the top level");
    if (!mica__mf_to_int(v, &n) || n != 1
        || v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return mica__mf_fail(mf, v, "mica: format version %s is not "
                             "supported (this build reads version 1)",
                             mica__mf_describe(v, d, sizeof(d)));
    return MICA_OK;
}

/* `device`: auto or a name of the device table into the build
 * configuration. */
static mica_status_t device(mica__mf_t *mf, yaml_node_t *v)
{
    const char *s = mica__mf_scalar(v);
    char d[64], list[128];
    if (!s || mica_device_parse(s, &mf->m->config.device) != MICA_OK)
        return mica__mf_fail(mf, v, "device: %s is not one of %s",
                             mica__mf_describe(v, d, sizeof(d)),
                             mica__device_choices(", ", list, sizeof list));
    return MICA_OK;
}

/* `precision`: a list of distinct precision dtypes, kept. */
static mica_status_t precision(mica__mf_t *mf, yaml_node_t *v)
{
    mica_manifest_t *m = mf->m;
    mica_status_t st;
    int32_t i, j, n;
    char lc[48];

    st = mica__mf_check_seq(mf, v, "precision");
    if (st != MICA_OK)
        return st;
    n = mica__mf_seq_len(v);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, v, i);
        mica_dtype_t dt;
        st = mica__mf_dtype(mf, it, "precision", &dt);
        if (st != MICA_OK)
            return st;
        if (dt != MICA_FLOAT32 && dt != MICA_FLOAT16 && dt != MICA_INT8
            && dt != MICA_BFLOAT16)
            return mica__mf_fail(mf, it, "precision: %s is not a precision "
                                 "(float32, float16, int8, bfloat16)",
                                 mica_dtype_name(dt));
        for (j = 0; j < m->nb_precisions; j++)
            if (m->precisions[j] == dt)
                return mica__mf_fail(mf, it, "precision: %s is listed twice "
                                     "(first at %s)", mica_dtype_name(dt),
                                     mica__mf_linecol(
                                         mica__mf_seq_item(mf, v, j), lc,
                                         sizeof(lc)));
        m->precisions[m->nb_precisions++] = dt;
        m->config.precisions |= 1u << (unsigned)dt;
    }
    return MICA_OK;
}

/*
 * `scales`: tensor name -> quantization scale (int8 I/O, as TensorRT's
 * dynamic ranges; layers read it in their tensor descriptors).
 */
static mica_status_t scales(mica__mf_t *mf, yaml_node_t *node)
{
    yaml_node_pair_t *p;
    mica_status_t st = mica__mf_check_map(mf, node, NULL, "scales");

    for (p = node->data.mapping.pairs.start;
         st == MICA_OK && p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mica__mf_node(mf, p->key);
        yaml_node_t *v = mica__mf_node(mf, p->value);
        char *origin;
        double d;
        if (!mica__mf_to_float(v, &d) || !(d > 0) || d > 3.4e38)
            return mica__mf_fail(mf, v, "scales: '%s' needs a positive "
                                 "number, not '%s'", mica__mf_scalar(k),
                                 mica__mf_scalar(v) ? mica__mf_scalar(v)
                                                    : "(not a scalar)");
        origin = mica__mf_origin(mf, k);
        st = mica_network_set_scale(mf->m->net, mica__mf_scalar(k), (float)d,
                                    origin);
        free(origin);
    }
    return st;
}

/* ---- modules ---------------------------------------------------------- */

/*
 * `modules.paths` (dirs) or `modules.load`: a list of paths relative to
 * the manifest; checked in the first pass, loaded (`load`) in the second.
 */
static mica_status_t module_files(mica__mf_t *mf, yaml_node_t *v, int dirs,
                                  int load)
{
    const char *key = dirs ? "modules.paths" : "modules.load";
    mica_status_t st;
    int32_t i;

    st = mica__mf_check_seq(mf, v, key);
    if (st != MICA_OK)
        return st;
    if (!load && mica__mf_seq_len(v) > 0 && !mf->ctx->manifest_modules)
        return mica__mf_fail(mf, v, "%s: this manifest loads modules "
                             "(native code), which is off unless its "
                             "caller allows it: run mica with "
                             "--allow-manifest-modules, or call "
                             "mica_context_allow_manifest_modules(); "
                             "--module-path and MICA_MODULE_PATH need "
                             "no permission", key);
    for (i = 0; i < mica__mf_seq_len(v); i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, v, i);
        const char *rel;
        char *path;
        char what[64];
        snprintf(what, sizeof(what), "%s: item %d", key, (int)i);
        st = mica__mf_string(mf, it, what, &rel);
        if (st != MICA_OK)
            return st;
        if (!load)
            continue;
        path = mica__mf_path(mf, rel);
        if (!path)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        st = dirs ? mica_context_load_dir(mf->ctx, path)
                  : mica_context_load_file(mf->ctx, path);
        free(path);
        if (st != MICA_OK)
            return mica__mf_core_fail(mf, st, it, key);
    }
    return MICA_OK;
}

/* `modules.prefer`: type -> implementation, into the build config. */
static mica_status_t prefer(mica__mf_t *mf, yaml_node_t *v)
{
    mica_manifest_t *m = mf->m;
    yaml_node_pair_t *p;
    mica_status_t st;
    int32_t n;

    st = mica__mf_check_map(mf, v, NULL, "modules.prefer");
    if (st != MICA_OK)
        return st;
    n = (int32_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
    m->prefer_types = calloc((size_t)n + 1, sizeof(char *));
    m->prefer_impls = calloc((size_t)n + 1, sizeof(char *));
    if (!m->prefer_types || !m->prefer_impls)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
         p++) {
        const char *type = mica__mf_scalar(mica__mf_node(mf, p->key));
        const char *impl;
        char what[300];
        snprintf(what, sizeof(what), "modules.prefer: %s", type);
        st = mica__mf_string(mf, mica__mf_node(mf, p->value), what, &impl);
        if (st != MICA_OK)
            return st;
        m->prefer_types[m->nb_prefer] = mica__strdup(type);
        m->prefer_impls[m->nb_prefer] = mica__strdup(impl);
        if (!m->prefer_types[m->nb_prefer] || !m->prefer_impls[m->nb_prefer])
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        m->nb_prefer++;
    }
    m->config.nb_prefer = m->nb_prefer;
    m->config.prefer_types = (const char *const *)m->prefer_types;
    m->config.prefer_impls = (const char *const *)m->prefer_impls;
    return MICA_OK;
}

/* `modules`, first pass: check the folders and files, keep the
 * preferences. */
static mica_status_t modules(mica__mf_t *mf, yaml_node_t *v)
{
    yaml_node_t *x;
    mica_status_t st;

    st = mica__mf_check_map(mf, v, module_keys, "modules");
    if (st != MICA_OK)
        return st;
    if ((x = mf->module_paths = mica__mf_get(mf, v, "paths", NULL))
        && (st = module_files(mf, x, 1, 0)) != MICA_OK)
        return st;
    if ((x = mf->module_load = mica__mf_get(mf, v, "load", NULL))
        && (st = module_files(mf, x, 0, 0)) != MICA_OK)
        return st;
    if ((x = mica__mf_get(mf, v, "prefer", NULL))
        && (st = prefer(mf, x)) != MICA_OK)
        return st;
    return MICA_OK;
}

/* Second pass: load the folders, then the files. */
static mica_status_t load_modules(mica__mf_t *mf)
{
    mica_status_t st;

    if (mf->module_paths &&
        (st = module_files(mf, mf->module_paths, 1, 1)) != MICA_OK)
        return st;
    if (mf->module_load &&
        (st = module_files(mf, mf->module_load, 0, 1)) != MICA_OK)
        return st;
    return MICA_OK;
}

/* ---- validation ------------------------------------------------------- */

/*
 * Pass a validation failure through with a position: the core names the
 * layer's origin itself; if it did not, find the layer it names.
 */
static mica_status_t validate(mica__mf_t *mf, yaml_node_t *root)
{
    mica_manifest_t *m = mf->m;
    mica_status_t st = mica_network_validate(m->net);
    char msg[MICA_ERROR_MAX];
    const char *p;
    size_t n = strlen(mf->path);
    int32_t i;

    if (st == MICA_OK)
        return MICA_OK;
    snprintf(msg, sizeof(msg), "%s", mica_context_error(mf->ctx));
    if (!strncmp(msg, mf->path, n) && msg[n] == ':')
        return mica__fail(mf->ctx, st, "%s", msg);
    p = strstr(msg, "layer '");
    if (p) {
        p += 7;
        for (i = 0; i < m->nb_layers; i++) {
            const char *ln = m->layers[i].name;
            if (ln && !strncmp(p, ln, strlen(ln)) && p[strlen(ln)] == '\'')
                return mica__fail(mf->ctx, st, "%s: %s", m->layers[i].origin,
                                  msg);
        }
    }
    return mica__mf_core_fail(mf, st, root, "network");
}

/* ---- load ------------------------------------------------------------- */

static mica_status_t load(mica__mf_t *mf)
{
    mica_manifest_t *m = mf->m;
    yaml_node_t *root, *v;
    mica_status_t st;
    char d[64];

    st = mica__mf_parse(mf);
    if (st != MICA_OK)
        return st;
    root = yaml_document_get_root_node(&mf->doc);
    if (!root)
        return mica__fail(mf->ctx, MICA_ERR_INVALID, "%s:1:1: the manifest "
                          "is empty (it starts with 'mica: 1')", mf->path);
    if (root->type != YAML_MAPPING_NODE)
        return mica__mf_fail(mf, root, "a manifest is a map, got %s",
                             mica__mf_describe(root, d, sizeof(d)));
    if ((st = version(mf, root)) != MICA_OK)
        return st;
    st = mica__mf_check_map(mf, root, top_keys, "the top level");
    if (st != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "name", NULL))) {
        const char *s;
        if ((st = mica__mf_string(mf, v, "name", &s)) != MICA_OK)
            return st;
        free(m->name);
        if (!(m->name = mica__strdup(s)))
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    }
    if ((v = mica__mf_get(mf, root, "device", NULL))
        && (st = device(mf, v)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "precision", NULL))
        && (st = precision(mf, v)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "modules", NULL))
        && (st = modules(mf, v)) != MICA_OK)
        return st;
    if ((st = mica_network_create(mf->ctx, &m->net)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "inputs", NULL))
        && (st = mica__mf_inputs(mf, v)) != MICA_OK)
        return st;
    if ((st = mica__mf_profiles(mf, mica__mf_get(mf, root, "profiles", NULL),
                                root)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "weights", NULL))
        && (st = mica__mf_weights(mf, v)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "layers", NULL))
        && (st = mica__mf_layers(mf, v)) != MICA_OK)
        return st;
    v = mica__mf_get(mf, root, "outputs", NULL);
    if (!v)
        return mica__mf_fail(mf, root, "missing 'outputs' (the list of "
                             "network outputs) at the top level");
    if ((st = mica__mf_outputs(mf, v, 0)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "shape_outputs", NULL))
        && (st = mica__mf_outputs(mf, v, 1)) != MICA_OK)
        return st;
    if ((v = mica__mf_get(mf, root, "scales", NULL))
        && (st = scales(mf, v)) != MICA_OK)
        return st;
    /* Second pass: what needs the registry. */
    if ((st = load_modules(mf)) != MICA_OK ||
        (st = mica__mf_layers_resolve(mf)) != MICA_OK)
        return st;
    return validate(mf, root);
}

MICA_EXPORT mica_status_t mica_manifest_load(mica_context_t *ctx,
                                             const char *path,
                                             mica_manifest_t **out)
{
    return mica__manifest_load_mem(ctx, path, NULL, 0, NULL, NULL, 0, out);
}

MICA_EXPORT mica_status_t mica_manifest_load_text(mica_context_t *ctx,
                                                  const char *name,
                                                  const char *text,
                                                  size_t len,
                                                  mica_manifest_t **out)
{
    if (!text && ctx && out) {
        *out = NULL;
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_manifest_load_text: text is NULL");
    }
    return mica__manifest_load_mem(ctx, name, text ? text : "", len, NULL,
                                   NULL, 0, out);
}

mica_status_t mica__manifest_load_mem(mica_context_t *ctx, const char *path,
                                      const char *text, size_t len,
                                      const char *mem_file,
                                      const void *mem_data, size_t mem_size,
                                      mica_manifest_t **out)
{
    mica__mf_t mf;
    mica_manifest_t *m;
    const char *slash;
    mica_status_t st;

    if (!out)
        return ctx ? mica__fail(ctx, MICA_ERR_INVALID,
                                "mica_manifest_load: out is NULL")
                   : MICA_ERR_INVALID;
    *out = NULL;
    if (!ctx)
        return MICA_ERR_INVALID;
    if (!path)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_manifest_load: path is NULL");
    memset(&mf, 0, sizeof(mf));
    m = calloc(1, sizeof(*m));
    if (!m)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
    m->ctx = ctx;
    m->path = mica__strdup(path);
    m->name = mica__strdup("");
    m->config.struct_size = sizeof(m->config);
    slash = strrchr(path, '/');
    mf.ctx = ctx;
    mf.path = path;
    mf.m = m;
    mf.text = text;
    mf.text_len = len;
    mf.mem_file = mem_file;
    mf.mem_data = mem_data;
    mf.mem_size = mem_size;
    mf.dir = slash == path ? mica__strdup("/")
             : slash ? mica__asprintf("%.*s", (int)(slash - path), path)
                     : mica__strdup("");
    if (!m->path || !m->name || !mf.dir) {
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = load(&mf);
out:
    mica__mf_layers_free(&mf);
    if (mf.have_doc)
        yaml_document_delete(&mf.doc);
    free(mf.dir);
    free(mf.defs);
    mica__index_free(&mf.def_index);
    mica__index_free(&mf.layer_index);
    if (st != MICA_OK) {
        mica_manifest_destroy(m);
        return st;
    }
    *out = m;
    return MICA_OK;
}

MICA_EXPORT void mica_manifest_destroy(mica_manifest_t *m)
{
    int32_t i, j;
    if (!m)
        return;
    if (m->net)
        mica_network_destroy(m->net);
    for (i = 0; i < m->nb_prefer; i++) {
        free(m->prefer_types[i]);
        free(m->prefer_impls[i]);
    }
    free(m->prefer_types);
    free(m->prefer_impls);
    for (i = 0; i < m->nb_inputs; i++) {
        free(m->inputs[i].name);
        free(m->inputs[i].origin);
    }
    free(m->inputs);
    for (i = 0; i < m->nb_profiles; i++) {
        for (j = 0; j < m->profiles[i].nb_ranges; j++) {
            free(m->profiles[i].ranges[j].vmin);
            free(m->profiles[i].ranges[j].vopt);
            free(m->profiles[i].ranges[j].vmax);
        }
        free(m->profiles[i].ranges);
        free(m->profiles[i].origin);
    }
    free(m->profiles);
    for (i = 0; i < m->nb_weights; i++) {
        free(m->weights[i].name);
        free(m->weights[i].origin);
        free(m->weights[i].data);
    }
    free(m->weights);
    mica__index_free(&m->weight_index);
    for (i = 0; i < m->nb_layers; i++) {
        free(m->layers[i].name);
        free(m->layers[i].origin);
    }
    free(m->layers);
    for (i = 0; i < m->nb_outputs; i++)
        free(m->outputs[i]);
    free(m->outputs);
    for (i = 0; i < m->nb_shape_outputs; i++)
        free(m->shape_outputs[i]);
    free(m->shape_outputs);
    free(m->path);
    free(m->name);
    free(m);
}

MICA_EXPORT mica_network_t *mica_manifest_network(mica_manifest_t *m)
{
    return m ? m->net : NULL;
}

MICA_EXPORT const mica_build_config_t *
mica_manifest_config(const mica_manifest_t *m)
{
    return m ? &m->config : NULL;
}

MICA_EXPORT const char *mica_manifest_name(const mica_manifest_t *m)
{
    return m && m->name ? m->name : "";
}
