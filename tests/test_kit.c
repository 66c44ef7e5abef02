/*
 * tests/test_kit.c - the module kit (<mica/kit.h>, <mica/kit_half.h>) on
 * its own, without libmica, as a third-party module uses it: float16 and
 * bfloat16 conversions, the schema check of deserialized fields, the
 * field-state layer's round trip, the ready-made callbacks, the text
 * helpers, the lazy library loader with its messages, and the functions
 * run at the module's fini.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "kit_host.h"
#include "tap.h"

/* ---- float16 and bfloat16 ----------------------------------------------- */

static int is_nan16(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

static void test_half(void)
{
    uint32_t h, bad = 0;

    is_int(0x3c00, mica_kit_float_to_half(1.0f), "half: 1");
    is_int(0xc000, mica_kit_float_to_half(-2.0f), "half: -2");
    is_int(0x8000, mica_kit_float_to_half(-0.0f), "half: -0 keeps its sign");
    is_int(0x7bff, mica_kit_float_to_half(65504.0f), "half: largest finite");
    is_int(0x7c00, mica_kit_float_to_half(65520.0f),
           "half: 65520 rounds to infinity");
    is_int(0x0001, mica_kit_float_to_half(ldexpf(1.0f, -24)),
           "half: smallest subnormal");
    is_int(0x0000, mica_kit_float_to_half(ldexpf(1.0f, -25)),
           "half: half of it ties to even (0)");
    is_int(0x0002, mica_kit_float_to_half(ldexpf(3.0f, -25)),
           "half: 1.5 of it ties to even (2)");
    is_int(0x3c00, mica_kit_float_to_half(1.0f + ldexpf(1.0f, -11)),
           "half: 1 + 2^-11 ties to even (1)");
    is_int(0x3c02, mica_kit_float_to_half(1.0f + ldexpf(3.0f, -11)),
           "half: 1 + 3 * 2^-11 ties to even (1 + 2^-9)");
    ok(is_nan16(mica_kit_float_to_half(NAN)), "half: NaN stays NaN");
    ok(isnan(mica_kit_half_to_float(0x7e00)), "half: back, NaN");
    is_double(ldexpf(1.0f, -24), mica_kit_half_to_float(0x0001), 0,
              "half: back, smallest subnormal");
    for (h = 0; h < 0x10000; h++)
        if (!is_nan16((uint16_t)h) &&
            mica_kit_float_to_half(mica_kit_half_to_float((uint16_t)h)) != h)
            bad++;
    is_int(0, bad, "half: every non-NaN value round-trips");

    is_int(0x3f80, mica_kit_float_to_bf16(1.0f), "bf16: 1");
    is_int(0x3f80, mica_kit_float_to_bf16(1.0f + ldexpf(1.0f, -8)),
           "bf16: 1 + 2^-8 ties to even (1)");
    is_int(0x3f82, mica_kit_float_to_bf16(1.0f + ldexpf(3.0f, -8)),
           "bf16: 1 + 3 * 2^-8 ties to even");
    is_int(0x7f80, mica_kit_float_to_bf16(INFINITY), "bf16: infinity");
    ok(isnan(mica_kit_bf16_to_float(mica_kit_float_to_bf16(NAN))),
       "bf16: NaN stays NaN");
    for (bad = 0, h = 0; h < 0x10000; h++)
        if (!isnan(mica_kit_bf16_to_float((uint16_t)h)) &&
            mica_kit_float_to_bf16(mica_kit_bf16_to_float((uint16_t)h)) != h)
            bad++;
    is_int(0, bad, "bf16: every non-NaN value round-trips");
}

/* ---- fields against a schema -------------------------------------------- */

static const char *const modes[] = {"a", "b", NULL};
static const mica_field_schema_t schema[] = {
    {"mode", MICA_FIELD_ENUM, 1, 1, 0, NULL, modes, NULL},
    {"pair", MICA_FIELD_INT, 2, 0, 0, NULL, NULL, NULL},
    {"type", MICA_FIELD_DTYPE, 1, 0, 0, NULL, NULL, NULL},
};

static mica_layer_t *probe_create(const mica_layer_creator_t *c,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err);

static const mica_layer_ops_t probe_ops =
    MICA_KIT_OPS(NULL, .nb_outputs = mica_kit_one_output);
static const mica_layer_creator_t probe = MICA_KIT_CREATOR(
    "Probe", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, schema,
    MICA_KIT_COUNT(schema), probe_create, &probe_ops);
static int created;

static mica_layer_t *probe_create(const mica_layer_creator_t *c,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err)
{
    created++;
    return mica_kit_layer_create(c, name, fields, err);
}

static int fit(int64_t mode, int32_t pair_count, int64_t type,
               const char *extra)
{
    int64_t pair[3] = {1, 2, 3};
    mica_field_t f[4] = {
        {"mode", MICA_FIELD_ENUM, 1, &mode},
        {"pair", MICA_FIELD_INT, pair_count, pair},
        {"type", MICA_FIELD_DTYPE, 1, &type},
        {extra ? extra : "", MICA_FIELD_INT, 1, pair},
    };
    mica_fields_t fields = {extra ? 4 : 3, f};
    return mica_kit_fields_fit(&fields, &probe);
}

static void test_fit(void)
{
    int64_t one = 1;
    mica_field_t wrong_type = {"mode", MICA_FIELD_INT, 1, &one};
    mica_fields_t none = {0, NULL}, wt = {1, &wrong_type};

    ok(fit(1, 2, MICA_INT8, NULL), "fit: valid fields fit");
    ok(!fit(2, 2, MICA_INT8, NULL), "fit: an enum index out of range");
    ok(!fit(-1, 2, MICA_INT8, NULL), "fit: a negative enum index");
    ok(!fit(0, 3, MICA_INT8, NULL), "fit: a list of the wrong length");
    ok(!fit(0, 2, MICA_DTYPE_COUNT_, NULL), "fit: a dtype out of range");
    ok(!fit(0, 2, MICA_INT8, "other"), "fit: a field outside the schema");
    ok(!fit(0, 2, MICA_INT8, "mode"), "fit: a field given twice");
    ok(!mica_kit_fields_fit(&none, &probe), "fit: a required field absent");
    ok(!mica_kit_fields_fit(&wt, &probe), "fit: a field of the wrong type");
}

/* ---- the field-state layer ---------------------------------------------- */

static void test_layer(void)
{
    int64_t mode = 1, pair[2] = {4, 5}, bad = 7;
    mica_field_t f[2] = {{"mode", MICA_FIELD_ENUM, 1, &mode},
                         {"pair", MICA_FIELD_INT, 2, pair}};
    mica_fields_t fields = {2, f};
    mica_error_t err = {""};
    mica_layer_t *l, *copy, *back;
    mica_kit_fields_t *saved;
    unsigned char buf[512];
    size_t size = 0;
    const mica_fields_t *v;

    l = probe.create(&probe, "p", &fields, &err);
    ok(l != NULL, "layer: created");
    if (!l)
        return;
    ok(l->ops->serialize(l, NULL, &size) == MICA_OK && size <= sizeof buf,
       "layer: serialized size %zu", size);
    ok(l->ops->serialize(l, buf, &size) == MICA_OK, "layer: serialized");
    back = probe.deserialize_ex(&probe, "p2", buf, size, 0, &err);
    ok(back != NULL, "layer: deserialized");
    v = back ? mica_kit_fields_view(((mica_kit_layer_t *)back)->fields) : NULL;
    ok(v && mica_kit_int(v, "mode", -1) == 1 && mica_kit_count(v, "pair") == 2
           && mica_kit_ints(v, "pair")[1] == 5,
       "layer: the fields came back");
    copy = l->ops->clone(l, &err);
    ok(copy && ((mica_kit_layer_t *)copy)->fields ==
                   ((mica_kit_layer_t *)l)->fields,
       "layer: a clone shares its layer's fields");
    l->ops->destroy(l);
    if (copy)
        copy->ops->destroy(copy);
    if (back)
        back->ops->destroy(back);

    /* Bytes that read well but hold an enum out of range. */
    f[0].data = &bad;
    saved = mica_kit_fields_copy(&fields);
    size = sizeof buf;
    ok(saved && mica_kit_fields_save(saved, buf, &size) == MICA_OK,
       "layer: an invalid set of fields saved");
    mica_kit_fields_free(saved);
    created = 0;
    back = probe.deserialize(&probe, "q", buf, size, &err);
    ok(back == NULL && created == 0,
       "layer: it is refused before create() is called");
    is_string("layer 'q': serialized Probe state is corrupt (64 bytes)",
              err.msg, "  with the corrupt-state message");
    back = probe.deserialize(&probe, "q", buf, 5, &err);
    ok(back == NULL, "layer: truncated bytes are refused");
}

/* ---- callbacks and text ------------------------------------------------- */

static void test_callbacks(void)
{
    mica_error_t err = {""};
    mica_dtype_t in[2] = {MICA_FLOAT16, MICA_FLOAT16}, out[1];
    mica_tensor_desc_t io[2];
    mica_expr_t c3 = {1, 3}, sym = {0, 0};
    const mica_expr_t *ex[3] = {&c3, &sym, &c3};
    mica_shape_expr_t sin[1], sout;
    int64_t v[3] = {2, -1, 40};
    char text[64];

    is_int(1, mica_kit_one_output(NULL), "one_output");
    is_int(0, mica_kit_no_outputs(NULL), "no_outputs");
    ok(mica_kit_same_dtypes(NULL, in, 1, out, 1, &err) == MICA_OK &&
           out[0] == MICA_FLOAT16,
       "same_dtypes: the input's type");
    ok(mica_kit_same_dtypes(NULL, in, 2, out, 1, &err) != MICA_OK,
       "same_dtypes: two inputs refused");
    is_string("expected 1 input and 1 output, got 2 and 1", err.msg,
              "  saying so");
    memset(sin, 0, sizeof sin);
    sin[0].nb_dims = 3;
    sin[0].d[0] = ex[0];
    sin[0].d[1] = ex[1];
    sin[0].d[2] = ex[2];
    ok(mica_kit_same_dims(NULL, 0, sin, 1, NULL, &sout, &err) == MICA_OK &&
           sout.nb_dims == 3 && sout.d[1] == &sym,
       "same_dims: the input's dims");
    ok(mica_kit_no_output_dims(NULL, 0, sin, 1, NULL, &sout, &err) != MICA_OK,
       "no_output_dims fails");
    is_string("has no outputs, asked for output 0", err.msg, "  saying so");

    memset(io, 0, sizeof io);
    io[0].dtype = io[1].dtype = MICA_FLOAT16;
    io[0].format = io[1].format = MICA_FORMAT_LINEAR;
    ok(mica_kit_float_linear(NULL, 0, io, 1, 1) &&
           mica_kit_float_linear(NULL, 1, io, 1, 1),
       "float_linear: float16 in and out");
    io[1].dtype = MICA_FLOAT32;
    ok(!mica_kit_float_linear(NULL, 1, io, 1, 1),
       "float_linear: not a float32 output of a float16 input");
    io[0].dtype = MICA_INT32;
    ok(!mica_kit_float_linear(NULL, 0, io, 1, 1), "float_linear: not int32");
    io[0].dtype = MICA_BOOL;
    ok(mica_kit_bool_input(NULL, 0, io, 1, 0), "bool_input: a bool input");
    ok(!mica_kit_bool_input(NULL, 0, io, 1, 1), "bool_input: no outputs");
    ok(mica_kit_any_type(MICA_BFLOAT16) &&
           !mica_kit_any_type(MICA_DTYPE_COUNT_),
       "any_type");

    is_string("[2, -1, 40]", mica_kit_ints_text(v, 3, text, sizeof text),
              "ints_text");
    is_string("[]", mica_kit_ints_text(v, 0, text, sizeof text),
              "ints_text: none");
    is_string("[2, -", mica_kit_ints_text(v, 3, text, 6),
              "ints_text: truncated to the buffer");
    is_string("[3, ?, 3]", mica_kit_exprs_text(ex, 3, text, sizeof text),
              "exprs_text");
}

/* ---- the lazy loader ---------------------------------------------------- */

static struct {
    MICA_KIT_FN(cos) cos;
    MICA_KIT_FN(floor) floor;
} m;

static void test_lib(void)
{
    static const mica_kit_sym_t good[] = {MICA_KIT_SYM(m, cos, "cos"),
                                          MICA_KIT_SYM(m, floor, "floor")};
    static const mica_kit_sym_t bad[] = {MICA_KIT_SYM(m, cos, "cos"),
                                         MICA_KIT_SYM(m, floor, "no_floor")};
    mica_kit_lib_t missing = MICA_KIT_LIB("Nothing", "libmica-nothing.so.1",
                                          &m, good);
    mica_kit_lib_t nosym = MICA_KIT_LIB("libm", "libm.so.6", &m, bad);
    mica_kit_lib_t libm = MICA_KIT_LIB("libm", "libm.so.6", &m, good);
    mica_error_t err = {""};

    is_int(MICA_ERR_NOT_FOUND, mica_kit_lib_open(&missing, &err),
           "lib: a missing library is not found");
    contains(err.msg, "Nothing is needed but cannot be loaded: "
                      "libmica-nothing.so.1: cannot open shared object file",
             "  and the message names it: %s", err.msg);
    is_int(MICA_ERR_NOT_FOUND, mica_kit_lib_open(&nosym, &err),
           "lib: a missing symbol is not found");
    is_string("libm is needed but libm.so.6 has no symbol 'no_floor'",
              err.msg, "  and the message names it");
    ok(m.cos == NULL && m.floor == NULL, "  the table is left as it was");
    is_int(MICA_OK, mica_kit_lib_open(&libm, &err), "lib: libm opens");
    ok(m.cos && m.cos(0.0) == 1.0 && m.floor(2.5) == 2.0,
       "  and its functions are in the table");
    m.cos = NULL;
    is_int(MICA_OK, mica_kit_lib_open(&libm, &err),
           "lib: a second open is a no-op");
    ok(m.cos == NULL, "  that leaves the table alone");
}

/* A LINEAR float32 descriptor of n dims. */
static mica_tensor_desc_t desc(int n, int64_t a, int64_t b, int64_t c)
{
    mica_tensor_desc_t t;
    memset(&t, 0, sizeof t);
    t.dims.nb_dims = n;
    t.dims.d[0] = a;
    t.dims.d[1] = b;
    t.dims.d[2] = c;
    return t;
}

static void test_bcast(void)
{
    mica_error_t err = {""};
    mica_expr_t c1 = {1, 1}, c3 = {1, 3}, c4 = {1, 4}, sym = {0, 0};
    mica_shape_expr_t in[2], out;
    mica_tensor_desc_t t[2];
    mica_kit_bcast_t v;
    int64_t off[2];

    memset(in, 0, sizeof in);
    in[0].nb_dims = in[1].nb_dims = 3;
    in[0].d[0] = &c3; in[0].d[1] = &c1; in[0].d[2] = &sym;
    in[1].d[0] = &c1; in[1].d[1] = &c4; in[1].d[2] = &c1;
    ok(mica_kit_broadcast_dims(in, 2, NULL, &out, &err) == MICA_OK &&
           out.nb_dims == 3 && out.d[0] == &c3 && out.d[1] == &c4 &&
           out.d[2] == &sym,
       "broadcast_dims: the length that is not 1");
    in[1].d[0] = &c4;
    ok(mica_kit_broadcast_dims(in, 2, NULL, &out, &err) != MICA_OK,
       "broadcast_dims: 3 against 4 refused");
    is_string("dimension 0 of input 0 is 3 and of input 1 is 4: they must be "
              "equal or one of them 1", err.msg, "  saying so");
    in[1].nb_dims = 2;
    ok(mica_kit_broadcast_dims(in, 2, NULL, &out, &err) != MICA_OK,
       "broadcast_dims: ranks differ");
    is_string("input 1 has rank 2 but input 0 has rank 3", err.msg,
              "  saying so");

    /* x [2, 3, 4] against a slope [1, 3, 1]: no dims merge */
    t[0] = desc(3, 2, 3, 4);
    t[1] = desc(3, 1, 3, 1);
    ok(mica_kit_broadcast_view(t, 2, &t[0].dims, 1, &v, &err) == MICA_OK &&
           v.rank == 3 && v.s[0][0] == 12 && v.s[0][2] == 1 &&
           v.s[1][0] == 0 && v.s[1][1] == 1 && v.s[1][2] == 0,
       "broadcast_view: per-channel strides");
    mica_kit_broadcast_offsets(&v, 2 * 12 - 1, off);
    ok(off[0] == 23 && off[1] == 2, "broadcast_offsets: the last element");
    /* [2, 1, 4] against [2, 1, 4]: one run of 8 */
    t[1] = t[0] = desc(3, 2, 1, 4);
    ok(mica_kit_broadcast_view(t, 2, &t[0].dims, 1, &v, &err) == MICA_OK &&
           v.rank == 1 && v.d[0] == 8 && v.s[0][0] == 1 && v.s[1][0] == 1,
       "broadcast_view: folded to one dimension");
    ok(mica_kit_broadcast_view(t, 2, &t[0].dims, 0, &v, &err) == MICA_OK &&
           v.rank == 3 && v.d[1] == 1,
       "broadcast_view: unfolded keeps the output's dims");
    t[1] = desc(3, 3, 1, 4);
    ok(mica_kit_broadcast_view(t, 2, &t[0].dims, 1, &v, &err) != MICA_OK,
       "broadcast_view: a length that does not broadcast");
    is_string("dimension 0 of input 1 is 3, which does not broadcast to 2",
              err.msg, "  saying so");
}

/* ---- the module's fini ------------------------------------------------- */

static char fini_trace[MICA_KIT_MAX_FINI + 2];

static void fini_a(void) { strcat(fini_trace, "a"); }
static void fini_b(void) { strcat(fini_trace, "b"); }

static void test_fini(void)
{
    int i, full = 0;

    fini_trace[0] = '\0';
    ok(mica_kit_at_fini(fini_a) == 0 && mica_kit_at_fini(fini_b) == 0,
       "at_fini: two functions registered");
    mica_kit_fini();
    is_string("ba", fini_trace, "fini: newest first");
    mica_kit_fini();
    is_string("ba", fini_trace, "fini: each runs once");
    for (i = 0; i < MICA_KIT_MAX_FINI; i++)
        full |= mica_kit_at_fini(fini_a);
    ok(full == 0 && mica_kit_at_fini(fini_b) == -1,
       "at_fini: refused past MICA_KIT_MAX_FINI");
    fini_trace[0] = '\0';
    mica_kit_fini();
    ok(strlen(fini_trace) == MICA_KIT_MAX_FINI && !strchr(fini_trace, 'b'),
       "fini: the refused one is not called");
}

int main(void)
{
    mica_error_t err = {""};

    plan_lazy();
    ok(mica_kit_init(kit_test_host(), &err) == MICA_OK, "init");
    test_half();
    test_fit();
    test_layer();
    test_callbacks();
    test_bcast();
    test_lib();
    test_fini();
    return exit_status();
}
