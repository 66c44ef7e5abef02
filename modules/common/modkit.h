/*
 * modules/common/modkit.h - what every in-tree module shares: the host
 * table, field access, float16 conversion, and a generic layer base whose
 * state is its fields (so serialize, deserialize and clone come for free).
 *
 * Linked into each module as a convenience library: every module .so has
 * its own copy, hidden from the others.  Only <mica/module.h> is used from
 * the host, never libmica, as for third-party modules.
 */
#ifndef MICA_MODKIT_H
#define MICA_MODKIT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host table, set by mica__mod_init() from the module's entry. */
extern const mica_host_t *mica__mod_host;

/* Remember the host; refuse hosts older than ABI version 1. */
mica_status_t mica__mod_init(const mica_host_t *host, mica_error_t *err);

/* err formatted through the host; evaluates to MICA_ERR_INVALID. */
#define MOD_FAIL(err, ...) \
    (mica__mod_host->set_error((err), __VA_ARGS__), MICA_ERR_INVALID)

/* ---- fields --------------------------------------------------------- */

/* Scalar or element `i` of a field, with a fallback if absent. */
int64_t mica__mod_int(const mica_fields_t *f, const char *name, int64_t dflt);
double mica__mod_float(const mica_fields_t *f, const char *name, double dflt);
/* Element count of a field, -1 if absent. */
int32_t mica__mod_count(const mica_fields_t *f, const char *name);
/* The int64 list of a field (INT, BOOL, ENUM, DTYPE), NULL if absent. */
const int64_t *mica__mod_ints(const mica_fields_t *f, const char *name);
/* The first weights of a WEIGHTS field, NULL if absent. */
const mica_weights_t *mica__mod_weights(const mica_fields_t *f,
                                        const char *name);
/* The first string of a STRING field, NULL if absent. */
const char *mica__mod_string(const mica_fields_t *f, const char *name);

/* ---- float16 on the host -------------------------------------------- */

float mica__half_to_float(uint16_t h);
/* Round to nearest even; overflow gives infinity; NaN stays NaN. */
uint16_t mica__float_to_half(float f);

/* ---- the field-state layer base ------------------------------------- */

/*
 * A serializable, immutable, reference-counted set of fields.
 * mica__mod_fields_copy deep copies (weights included); the blob
 * functions write and read a flat little-endian byte form in which every
 * weights' values start at a multiple of 64 bytes from the blob's start.
 * A layer and its clones share one (mica__mod_fields_share); each holder
 * drops its reference with mica__mod_fields_free, the last one frees it.
 * The count is atomic: clones may be made and destroyed on several
 * threads at once.
 */
typedef struct mica__mod_fields mica__mod_fields_t;

mica__mod_fields_t *mica__mod_fields_copy(const mica_fields_t *f);
const mica_fields_t *mica__mod_fields_view(const mica__mod_fields_t *f);
/* Another reference to f (returned). */
mica__mod_fields_t *mica__mod_fields_share(mica__mod_fields_t *f);
/* Drop a reference; the last frees f.  NULL is ignored. */
void mica__mod_fields_free(mica__mod_fields_t *f);
/* buf NULL: *size gets the size; else *size is capacity in, used out. */
mica_status_t mica__mod_fields_save(const mica__mod_fields_t *f, void *buf,
                                    size_t *size);
/*
 * Fields read from a blob (either form this kit wrote: the current one or
 * the unpadded one of engine files of format 1); NULL if it is corrupt or
 * memory runs out.  With `borrow` (the bytes stay valid and unchanged for
 * the fields' whole life: MICA_STATE_PERSISTENT), weights whose values
 * lie aligned for their element type are used in place, not copied.
 */
mica__mod_fields_t *mica__mod_fields_load(const void *buf, size_t size,
                                          int borrow);

/*
 * A layer whose whole state follows from its fields.  Embed it first in
 * the layer's struct:
 *
 *     typedef struct { mica__mod_layer_t base; int op; } my_layer_t;
 *
 * and build with mica__mod_layer_new() from the creator's create().
 * The ops table uses mica__mod_layer_serialize / _clone / _destroy and
 * the creator's deserialize(_ex) is mica__mod_layer_deserialize(_ex),
 * which calls the creator's create() with the stored fields; create()
 * then keeps those fields through mica__mod_layer_new instead of copying
 * them, and a clone shares its layer's (create() again, with the
 * fields taken over the same way): the weights exist once per engine,
 * in place in the engine's bytes when loaded with MICA_STATE_PERSISTENT.
 * A create() must therefore treat its fields as read-only and shared.
 * `fini`, if set, frees what the derived layer owns (device buffers,
 * handles) before the base is freed.
 */
typedef struct mica__mod_layer {
    mica_layer_t layer;
    const mica_layer_creator_t *creator;
    char *name;
    mica__mod_fields_t *fields;
    void (*fini)(struct mica__mod_layer *self);
} mica__mod_layer_t;

/*
 * Allocate `size` bytes (>= sizeof(mica__mod_layer_t)) zeroed, set ops,
 * creator, a copy of name and fields.  NULL (and err set) on failure.
 */
void *mica__mod_layer_new(size_t size, const mica_layer_ops_t *ops,
                          const mica_layer_creator_t *creator,
                          const char *name, const mica_fields_t *fields,
                          mica_error_t *err);

/*
 * create() of a layer whose whole state is its fields, with no struct of
 * its own: the creator's user_data holds its ops (Shape, Select, ...).
 */
mica_layer_t *mica__mod_layer_create(const mica_layer_creator_t *creator,
                                     const char *name,
                                     const mica_fields_t *fields,
                                     mica_error_t *err);

mica_status_t mica__mod_layer_serialize(const mica_layer_t *layer, void *buf,
                                        size_t *size);
mica_layer_t *mica__mod_layer_clone(const mica_layer_t *layer,
                                    mica_error_t *err);
void mica__mod_layer_destroy(mica_layer_t *layer);
mica_layer_t *mica__mod_layer_deserialize(const mica_layer_creator_t *c,
                                          const char *name, const void *data,
                                          size_t size, mica_error_t *err);
/* With MICA_STATE_PERSISTENT in flags, weights are borrowed in place. */
mica_layer_t *mica__mod_layer_deserialize_ex(const mica_layer_creator_t *c,
                                             const char *name,
                                             const void *data, size_t size,
                                             uint32_t flags,
                                             mica_error_t *err);

/*
 * A creator of version 1 in the default namespace whose layers are
 * field-state layers (mica__mod_layer_t): they deserialize through
 * mica__mod_layer_deserialize(_ex), and `user_data` usually carries the
 * ops.
 * Designated initializers, so that members the ABI appends stay zero.
 */
#define MICA__MOD_CREATOR(type_, impl_, devices_, priority_, role_,          \
                          fields_, nb_fields_, create_, user_data_)          \
    {.struct_size = sizeof(mica_layer_creator_t),                           \
     .type = (type_),                                                       \
     .version = 1,                                                          \
     .priority = (priority_),                                               \
     .ns = "",                                                              \
     .implementation = (impl_),                                             \
     .devices = (devices_),                                                 \
     .role = (role_),                                                       \
     .fields = (fields_),                                                   \
     .nb_fields = (nb_fields_),                                             \
     .create = (create_),                                                   \
     .deserialize = mica__mod_layer_deserialize,                            \
     .user_data = (void *)(user_data_),                                     \
     .deserialize_ex = mica__mod_layer_deserialize_ex}

/*
 * The module's descriptor and entry point, for an in-tree module named
 * `name_` whose creators are the array `creators_`.  Its version is the
 * package's.
 */
#define MICA__MOD_ENTRY(name_, description_, creators_)                     \
    static const mica_module_desc_t mica__mod_desc_ = {                     \
        .struct_size = sizeof(mica_module_desc_t),                          \
        .abi_version = MICA_ABI_VERSION,                                    \
        .name = (name_),                                                    \
        .version = PACKAGE_VERSION,                                         \
        .license = "MIT",                                                   \
        .description = (description_),                                     \
        .creators = (creators_),                                            \
        .nb_creators = (int32_t)(sizeof(creators_) / sizeof((creators_)[0])), \
    };                                                                      \
    MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *host,     \
                                               const mica_module_desc_t **desc, \
                                               mica_error_t *err)           \
    {                                                                       \
        mica_status_t st_ = mica__mod_init(host, err);                      \
        if (st_ == MICA_OK)                                                 \
            *desc = &mica__mod_desc_;                                       \
        return st_;                                                         \
    }

/* ---- shared layer pieces ----------------------------------------------- */

/* Every element type a pure data movement takes: float32, float16,
 * bfloat16, int8, uint8, int32, int64, bool. */
int mica__mod_any_type(mica_dtype_t t);

/* nb_outputs of layers with one output, and with none. */
int32_t mica__mod_one_output(const mica_layer_t *layer);
int32_t mica__mod_no_outputs(const mica_layer_t *layer);

/* The enqueue of a boundary layer, which the core never calls: it runs
 * them through enqueue_boundary.  Fails with a message saying so. */
mica_status_t mica__mod_boundary_enqueue(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err);

/* Default format check: LINEAR, and io[pos].dtype accepted by `ok`. */
int32_t mica__mod_linear(const mica_tensor_desc_t *io, int32_t pos);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MODKIT_H */
