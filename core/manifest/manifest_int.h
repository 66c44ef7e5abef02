/*
 * core/manifest/manifest_int.h - the YAML manifest loader's internals:
 * the parsed manifest (mica_manifest_t) and the loader's state shared by
 * yaml_doc.c (node helpers, positions, errors), weights.c, params.c,
 * layers.c, tensors.c and manifest.c.
 *
 * Loading has two passes over the YAML document: the first parses and
 * checks everything the manifest says on its own, without the registry;
 * the second loads the modules it names, then resolves each layer's type
 * to a creator and has core/base/fields.c check its params by that schema.
 */
#ifndef MICA_MANIFEST_INT_H
#define MICA_MANIFEST_INT_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "mica_int.h"

/* ---- the parsed manifest ------------------------------------------- */

/* A network input as declared. */
typedef struct mica__mf_input {
    char *name;
    char *origin;       /* "file:line:col" of its name */
    mica_dtype_t dtype;
    mica_dims_t dims;   /* -1: runtime dimension */
    int shape_tensor;
} mica__mf_input_t;

/* One input's range within a profile. */
typedef struct mica__mf_range {
    int32_t input;      /* index into inputs */
    /* Execution inputs: dimensions (nb_dims = the input's rank). */
    mica_dims_t min, opt, max;
    /* Shape tensors: values (nb_values each), else NULL. */
    int32_t nb_values;
    int64_t *vmin, *vopt, *vmax;
} mica__mf_range_t;

typedef struct mica__mf_profile {
    char *origin;
    mica__mf_range_t *ranges;
    int32_t nb_ranges;
} mica__mf_profile_t;

/* A block of weights; named ones come from `weights`, inline ones from
 * params (name NULL).  The data lives as long as the manifest. */
typedef struct mica__mf_weights {
    char *name;
    char *origin;
    mica_weights_t w;
    void *data;
} mica__mf_weights_t;

/* What the manifest says of one layer beyond its spec. */
typedef struct mica__mf_layer {
    char *name;
    char *origin;
    int has_precision;
    mica_dtype_t precision;
} mica__mf_layer_t;

struct mica_manifest {
    mica_context_t *ctx;
    char *path;
    char *name;
    mica_network_t *net;

    mica_build_config_t config;
    int32_t nb_prefer;
    char **prefer_types;
    char **prefer_impls;

    mica_dtype_t precisions[MICA_DTYPE_COUNT_];
    int32_t nb_precisions;

    mica__mf_input_t *inputs;
    int32_t nb_inputs;
    mica__mf_profile_t *profiles;
    int32_t nb_profiles;
    mica__mf_weights_t *weights;
    int32_t nb_weights;
    mica__index_t weight_index; /* weights name -> index in weights */
    mica__mf_layer_t *layers;
    int32_t nb_layers;
    char **outputs;
    int32_t nb_outputs;
    char **shape_outputs;
    int32_t nb_shape_outputs;
};

/* ---- loader state ---------------------------------------------------- */

/* Where a tensor name is defined: by an input (layer -1) or a layer. */
typedef struct mica__mf_def {
    const char *name;
    int32_t layer;
    yaml_node_t *node;
} mica__mf_def_t;

/* ---- params.c -------------------------------------------------------- */

/* A layer's params as written (loose), for core/base/fields.c. */
typedef struct mica__mf_params {
    mica__given_t *given;
    int32_t nb_given;
    char *origin;          /* where a missing param is reported: the params
                              map, else the layer */
    void **owned;
    int32_t nb_owned;
} mica__mf_params_t;

/* A layer parsed in the first pass, resolved in the second.  Strings
 * point into the YAML document. */
typedef struct mica__mf_pending {
    yaml_node_t *node, *type_node;
    const char *type, *ns, *impl, *loop, *cond;
    int32_t version;
    const char **ins, **outs;
    char **in_origins, **out_origins;
    int32_t nb_in, nb_out;
    mica__mf_params_t params;
} mica__mf_pending_t;

typedef struct mica__mf {
    mica_context_t *ctx;
    const char *path;      /* as given, for messages */
    char *dir;             /* the manifest's folder, "" for the cwd */
    yaml_document_t doc;
    int have_doc;
    mica_manifest_t *m;
    mica__mf_def_t *defs;  /* every tensor definition so far */
    int32_t nb_defs, cap_defs;
    mica__index_t def_index;   /* tensor name -> index in defs */
    mica__index_t layer_index; /* layer name -> index in m->layers */
    /* A manifest in memory (mica__manifest_load_mem): its text, and the
     * one `file:` it may name that is bytes in memory too. */
    const char *text;
    size_t text_len;
    const char *mem_file;
    const void *mem_data;
    size_t mem_size;
    mica__mf_pending_t *pending; /* per layer of m->layers */
    yaml_node_t *module_paths, *module_load; /* loaded in the second pass */
} mica__mf_t;

/*
 * Load a manifest from `len` bytes of `text`; `path` names it in messages
 * and its folder anchors relative paths; a weights `file:` equal to
 * `mem_file` reads `mem_size` bytes at `mem_data` instead of a file (the
 * ONNX importer's weights).  Otherwise as mica_manifest_load.
 */
mica_status_t mica__manifest_load_mem(mica_context_t *ctx, const char *path,
                                      const char *text, size_t len,
                                      const char *mem_file,
                                      const void *mem_data, size_t mem_size,
                                      mica_manifest_t **out);

/* ---- yaml_load.c: the document, within limits ------------------------ */

/* The largest manifest text, and the deepest nesting of its nodes. */
#define MICA__MF_MAX_BYTES ((size_t)64 << 20)
#define MICA__MF_MAX_BYTES_TEXT "64 MiB"
#define MICA__MF_MAX_DEPTH 64
#define MICA__MF_MAX_DEPTH_TEXT "64"

/*
 * Open and parse the file (or mf->text) into mf->doc: errors name
 * file:line:col.  Refuses a text over MICA__MF_MAX_BYTES, nesting deeper
 * than MICA__MF_MAX_DEPTH, YAML aliases and a second document.
 */
mica_status_t mica__mf_parse(mica__mf_t *mf);

/* ---- yaml_doc.c: nodes, positions, errors ---------------------------- */

yaml_node_t *mica__mf_node(mica__mf_t *mf, int id);

/* "file:line:col" of a node (1-based), malloc'd. */
char *mica__mf_origin(mica__mf_t *mf, const yaml_node_t *node);

/* "line:col" of a node into buf. */
const char *mica__mf_linecol(const yaml_node_t *node, char *buf, size_t len);

/* Fail with "file:line:col: <message>" at `node`; MICA_ERR_INVALID. */
mica_status_t mica__mf_fail(mica__mf_t *mf, const yaml_node_t *node,
                            const char *fmt, ...) MICA_PRINTF(3, 4);
mica_status_t mica__mf_fail_st(mica__mf_t *mf, mica_status_t st,
                               const yaml_node_t *node, const char *fmt,
                               ...) MICA_PRINTF(4, 5);

/* The scalar's text, or NULL if the node is not a scalar. */
const char *mica__mf_scalar(const yaml_node_t *node);
/* Non-zero for a plain ~, null, Null, NULL or empty scalar. */
int mica__mf_is_null(const yaml_node_t *node);
/* Short description of a node for messages: 'abc', a list, a map. */
const char *mica__mf_describe(const yaml_node_t *node, char *buf,
                              size_t len);

/* Scalar conversions; non-zero on success. */
int mica__mf_to_int(const yaml_node_t *node, int64_t *out);
int mica__mf_to_float(const yaml_node_t *node, double *out);
int mica__mf_to_bool(const yaml_node_t *node, int *out);

/*
 * Check that `node` is a map whose keys are all scalars, unique and in
 * `allowed` (NULL-terminated; NULL accepts any key).  `what` names the
 * map in messages ("layer 'add'", "the top level").
 */
mica_status_t mica__mf_check_map(mica__mf_t *mf, yaml_node_t *node,
                                 const char *const *allowed,
                                 const char *what);
/* Check that `node` is a sequence; `what` names it. */
mica_status_t mica__mf_check_seq(mica__mf_t *mf, yaml_node_t *node,
                                 const char *what);
/* The value of `key` in map `node`, NULL if absent; *key_node if asked. */
yaml_node_t *mica__mf_get(mica__mf_t *mf, yaml_node_t *node, const char *key,
                          yaml_node_t **key_node);
/* Number of items of a sequence and item i. */
int32_t mica__mf_seq_len(const yaml_node_t *node);
yaml_node_t *mica__mf_seq_item(mica__mf_t *mf, yaml_node_t *node, int32_t i);

/* A scalar string value (not null, not a collection); `what` names it. */
mica_status_t mica__mf_string(mica__mf_t *mf, yaml_node_t *node,
                              const char *what, const char **out);
/* A dtype name; `what` names the field. */
mica_status_t mica__mf_dtype(mica__mf_t *mf, yaml_node_t *node,
                             const char *what, mica_dtype_t *out);
/* A list of at most MICA_MAX_DIMS integers >= min_dim. */
mica_status_t mica__mf_dims(mica__mf_t *mf, yaml_node_t *node,
                            const char *what, int64_t min_dim,
                            mica_dims_t *out);
/* "[2, 3]" into buf. */
const char *mica__mf_dims_str(const mica_dims_t *dims, char *buf,
                              size_t len);
/* Resolve a path relative to the manifest's folder; malloc'd. */
char *mica__mf_path(mica__mf_t *mf, const char *rel);

/*
 * Pass a failure of the core through: keep its message when it already
 * names a position, otherwise put the origin of `node` in front.
 */
mica_status_t mica__mf_core_fail(mica__mf_t *mf, mica_status_t st,
                                 const yaml_node_t *node,
                                 const char *prefix);

/* ---- weights.c ------------------------------------------------------- */

/*
 * Parse a blob {dtype, shape, data | file [offset] | npy} at `node` and
 * append it to the manifest's weights under `name` (NULL for an inline
 * param blob).  `what` names it in messages ("weights 'w'").
 */
mica_status_t mica__mf_weights_blob(mica__mf_t *mf, yaml_node_t *node,
                                    const char *name, const char *what,
                                    const mica__mf_weights_t **out);
/* The top-level `weights` map. */
mica_status_t mica__mf_weights(mica__mf_t *mf, yaml_node_t *node);
/* A named weights entry, NULL if none. */
const mica__mf_weights_t *mica__mf_weights_find(const mica_manifest_t *m,
                                                const char *name);

/* ---- params.c -------------------------------------------------------- */

/*
 * The `params` map (node may be NULL) of layer `layer` as written: each
 * param's name and loose value with their positions.  Only the map's
 * own shape is checked here (a map with names for keys).
 */
mica_status_t mica__mf_params(mica__mf_t *mf, yaml_node_t *node,
                              yaml_node_t *layer_node, const char *layer,
                              mica__mf_params_t *out);
void mica__mf_params_free(mica__mf_params_t *p);

/* The validator's reader of WEIGHTS params (mica__weights_fn); user is
 * the loader's mica__mf_t. */
mica_status_t mica__mf_params_weights(void *user, const mica__loose_t *v,
                                      const char *what, mica_weights_t *out,
                                      char *err, size_t errlen);

/* ---- tensors.c: inputs, profiles, outputs ---------------------------- */

mica_status_t mica__mf_inputs(mica__mf_t *mf, yaml_node_t *node);
mica_status_t mica__mf_profiles(mica__mf_t *mf, yaml_node_t *node,
                                yaml_node_t *root);
mica_status_t mica__mf_outputs(mica__mf_t *mf, yaml_node_t *node,
                               int shapes);
/* Record a tensor definition; fails if the name is already defined. */
mica_status_t mica__mf_define(mica__mf_t *mf, const char *name,
                              int32_t layer, yaml_node_t *node,
                              const char *who);
/* The definition of `name`, NULL if none. */
const mica__mf_def_t *mica__mf_lookup(const mica__mf_t *mf,
                                      const char *name);

/* ---- layers.c -------------------------------------------------------- */

/* First pass: parse the `layers` list, define their outputs. */
mica_status_t mica__mf_layers(mica__mf_t *mf, yaml_node_t *node);
/* Second pass: resolve each layer's type, check its params, add it. */
mica_status_t mica__mf_layers_resolve(mica__mf_t *mf);
/* The first pass's records. */
void mica__mf_layers_free(mica__mf_t *mf);

#endif /* MICA_MANIFEST_INT_H */
