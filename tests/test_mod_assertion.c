/*
 * tests/test_mod_assertion.c - the Assertion layer in small networks (its
 * condition is a bool shape tensor, which a one-layer network cannot give
 * it: shape-tensor network inputs are int32).
 *
 *   runtime:  shape inputs p, q (int32 [2], values within a profile)
 *             -> ElementWise equal -> Assertion "p must equal q";
 *             x -> Identity -> y.  Passes when p == q, else the run fails
 *             with MICA_ERR_RUNTIME, the message and the false element.
 *   0-D:      p0 < q0 as a 0-D condition, with the default message.
 *   build:    a Constant bool [1, 0] -> Assertion: refused at build time;
 *             TensorRT's example, Shape values compared (here through
 *             Concatenation's values too): refused at build time.
 *   errors:   an int32 condition.
 * Each network runs on the CPU and, where a GPU is usable, on CUDA (the
 * Assertion itself always runs on the host in phase 1).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct net {
    mica_network_t *net;
    mica_engine_t *engine;
    mica_exec_t *exec;
} net_t;

static void net_free(net_t *n)
{
    mica_exec_destroy(n->exec);
    mica_engine_destroy(n->engine);
    mica_network_destroy(n->net);
    memset(n, 0, sizeof *n);
}

static void add_layer(net_t *n, const char *name, const char *type,
                      int nb_in, const char *const *in, int nb_out,
                      const char *const *out, th_fields_t *f)
{
    mica_layer_spec_t s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.name = name;
    s.type = type;
    s.nb_inputs = nb_in;
    s.inputs = in;
    s.nb_outputs = nb_out;
    s.outputs = out;
    s.fields = th_fields_view(f);
    if (mica_network_add_layer(n->net, &s) != MICA_OK)
        bail("adding layer '%s': %s", name, mica_context_error(th_context()));
    th_fields_free(f);
}

/*
 * A shape input `name` of `len` values (0: a 0-D one) in [shift, shift +
 * 10], opt shift + 1.  (The builder runs phase 1 at the profile's corners,
 * so the conditions below hold there.)
 */
static void add_shape_input(net_t *n, const char *name, int len, int shift)
{
    int32_t lo[2], opt[2], hi[2];
    mica_dims_t d;
    int32_t profile;
    lo[0] = lo[1] = shift;
    opt[0] = opt[1] = shift + 1;
    hi[0] = hi[1] = shift + 10;
    memset(&d, 0, sizeof d);
    d.nb_dims = len ? 1 : 0;
    d.d[0] = len;
    if (mica_network_add_shape_input(n->net, name, &d, NULL) != MICA_OK ||
        (mica_network_nb_profiles(n->net) == 0 &&
         mica_network_add_profile(n->net, &profile) != MICA_OK) ||
        mica_network_set_profile_values(n->net, 0, name, len ? len : 1, lo,
                                        opt, hi, NULL) != MICA_OK)
        bail("shape input '%s': %s", name, mica_context_error(th_context()));
}

/* x (float32 [2]) -> Identity -> y, so the network has an output. */
static void add_passthrough(net_t *n)
{
    static const char *const in[] = {"x"}, *const out[] = {"y"};
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 2;
    if (mica_network_add_input(n->net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK)
        bail("input x: %s", mica_context_error(th_context()));
    add_layer(n, "copy", "Identity", 1, in, 1, out, NULL);
    if (mica_network_mark_output(n->net, "y", NULL) != MICA_OK)
        bail("output y: %s", mica_context_error(th_context()));
}

/* p, q -> ElementWise `op` -> Assertion (message `msg`, NULL: none). */
static void make_net(net_t *n, int len, const char *op, const char *msg)
{
    static const char *const ein[] = {"p", "q"}, *const eout[] = {"c"};
    static const char *const ain[] = {"c"};
    th_fields_t *f = th_fields();

    memset(n, 0, sizeof *n);
    if (mica_network_create(th_context(), &n->net) != MICA_OK)
        bail("network: %s", mica_context_error(th_context()));
    /* q's range is one above p's for `less`, the same for `equal` */
    add_shape_input(n, "p", len, 0);
    add_shape_input(n, "q", len, strcmp(op, "less") == 0);
    add_passthrough(n);
    add_layer(n, "cmp", "ElementWise", 2, ein, 1, eout,
              th_f_str(th_fields(), "op", op));
    if (msg)
        th_f_str(f, "message", msg);
    add_layer(n, "check", "Assertion", 1, ain, 0, NULL, f);
}

static const char *dev_name(uint32_t dev)
{
    return dev == MICA_DEVICE_CUDA ? "cuda" : "cpu";
}

/*
 * Build on `dev` and run with p, q (len values; 0: 0-D); expect `want`
 * (MICA_OK, or the failing status with `needle` in the message) and, on
 * success, y == x.
 */
static void run_case(const char *label, uint32_t dev, int len,
                     const char *op, const char *msg, const int32_t *p,
                     const int32_t *q, mica_status_t want,
                     const char *needle)
{
    static const float x[2] = {1.5f, -2.0f};
    mica_build_config_t cfg;
    mica_dims_t ds, dx;
    mica_tensor_desc_t yd;
    const void *y;
    mica_status_t st;
    net_t n;

    make_net(&n, len, op, msg);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = dev;
    memset(&ds, 0, sizeof ds);
    ds.nb_dims = len ? 1 : 0;
    ds.d[0] = len;
    memset(&dx, 0, sizeof dx);
    dx.nb_dims = 1;
    dx.d[0] = 2;
    st = mica_engine_build(n.net, &cfg, &n.engine);
    if (st == MICA_OK)
        st = mica_exec_create(n.engine, &n.exec);
    if (st == MICA_OK)
        st = mica_exec_set_input(n.exec, "p", &ds, p);
    if (st == MICA_OK)
        st = mica_exec_set_input(n.exec, "q", &ds, q);
    if (st == MICA_OK)
        st = mica_exec_set_input(n.exec, "x", &dx, x);
    if (st == MICA_OK)
        st = mica_exec_run(n.exec);
    if (want == MICA_OK) {
        int good = st == MICA_OK &&
                   mica_exec_get_output(n.exec, "y", &yd, &y) == MICA_OK &&
                   memcmp(y, x, sizeof x) == 0;
        if (!ok(good, "%s: %s", label, dev_name(dev)))
            diag("status %s: %s", mica_status_name(st),
                 mica_context_error(th_context()));
    } else {
        const char *e = mica_context_error(th_context());
        int good = st == want && e && strstr(e, needle);
        if (!ok(good, "%s: %s", label, dev_name(dev)))
            diag("status %s (want %s): '%s' (want '%s')",
                 mica_status_name(st), mica_status_name(want), e ? e : "",
                 needle);
    }
    net_free(&n);
}

/* Constant bool [1, 0] -> Assertion: the build fails. */
static void build_time_case(uint32_t dev)
{
    static const double v[] = {1, 0};
    static const char *const cout[] = {"k"}, *const ain[] = {"k"};
    th_tensor_t w = th_t(MICA_BOOL, v, 1, 2);
    mica_build_config_t cfg;
    mica_status_t st;
    const char *e;
    net_t n;

    memset(&n, 0, sizeof n);
    if (mica_network_create(th_context(), &n.net) != MICA_OK)
        bail("network: %s", mica_context_error(th_context()));
    add_passthrough(&n);
    add_layer(&n, "k", "Constant", 0, NULL, 1, cout,
              th_f_weights(th_fields(), "weights", &w));
    add_layer(&n, "never", "Assertion", 1, ain, 0, NULL,
              th_f_str(th_fields(), "message", "k is never all true"));
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = dev;
    st = mica_engine_build(n.net, &cfg, &n.engine);
    e = mica_context_error(th_context());
    if (!ok(st != MICA_OK && e && strstr(e, "k is never all true") &&
                strstr(e, "element 1"),
            "a constant false condition is refused at build time: %s",
            dev_name(dev)))
        diag("status %s: '%s'", mica_status_name(st), e ? e : "");
    net_free(&n);
    th_free(&w);
}

/*
 * (Both build-time cases accept either of the core's two ways to refuse:
 * the provably-false check on the condition's values, or phase 1 run at
 * the profile's points during the build.)
 *
 * TensorRT's build-time example, through Shape and Concatenation values:
 * a [2,3], b [2,4]; Concatenation(Shape a, Shape b) == Concatenation(
 * Shape b, Shape lhs_b) elementwise -> Assertion.  With lhs_b = b the
 * values are [2,3,2,4] against [2,4,2,3]: provably false at element 1;
 * with lhs_b = a, [2,3,2,3] against itself holds and the network runs.
 */
static void shape_values_case(uint32_t dev, int holds)
{
    static const char *const sa_in[] = {"a"}, *const sa_out[] = {"sa"};
    static const char *const sb_in[] = {"b"}, *const sb_out[] = {"sb"};
    static const char *const l_in[] = {"sa", "sb"}, *const l_out[] = {"l"};
    static const char *const r_in_f[] = {"sb", "sa"};
    static const char *const r_in_t[] = {"sa", "sa"};
    static const char *const l_in_t[] = {"sa", "sa"};
    static const char *const r_out[] = {"r"};
    static const char *const e_in[] = {"l", "r"}, *const e_out[] = {"c"};
    static const char *const a_in[] = {"c"};
    mica_build_config_t cfg;
    mica_dims_t d;
    mica_status_t st;
    const char *e;
    net_t n;

    memset(&n, 0, sizeof n);
    if (mica_network_create(th_context(), &n.net) != MICA_OK)
        bail("network: %s", mica_context_error(th_context()));
    add_passthrough(&n);
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 3;
    if (mica_network_add_input(n.net, "a", MICA_FLOAT32, &d, NULL) != MICA_OK)
        bail("input a: %s", mica_context_error(th_context()));
    d.d[1] = 4;
    if (mica_network_add_input(n.net, "b", MICA_FLOAT32, &d, NULL) != MICA_OK)
        bail("input b: %s", mica_context_error(th_context()));
    add_layer(&n, "sa", "Shape", 1, sa_in, 1, sa_out, NULL);
    add_layer(&n, "sb", "Shape", 1, sb_in, 1, sb_out, NULL);
    add_layer(&n, "l", "Concatenation", 2, holds ? l_in_t : l_in, 1, l_out,
              th_f_int(th_fields(), "axis", 0));
    add_layer(&n, "r", "Concatenation", 2, holds ? r_in_t : r_in_f, 1,
              r_out, th_f_int(th_fields(), "axis", 0));
    add_layer(&n, "eq", "ElementWise", 2, e_in, 1, e_out,
              th_f_str(th_fields(), "op", "equal"));
    add_layer(&n, "same", "Assertion", 1, a_in, 0, NULL,
              th_f_str(th_fields(), "message", "shapes differ"));
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = dev;
    st = mica_engine_build(n.net, &cfg, &n.engine);
    e = mica_context_error(th_context());
    if (holds) {
        if (!ok(st == MICA_OK, "Shape/Concatenation values that hold build: "
                "%s", dev_name(dev)))
            diag("status %s: '%s'", mica_status_name(st), e ? e : "");
    } else if (!ok(st != MICA_OK && e && strstr(e, "shapes differ") &&
                       strstr(e, "element 1"),
                   "Shape/Concatenation values provably false at build "
                   "time: %s", dev_name(dev))) {
        diag("status %s: '%s'", mica_status_name(st), e ? e : "");
    }
    net_free(&n);
}

/* p (int32 [2]) straight into Assertion: refused, not bool. */
static void int_condition_case(void)
{
    static const char *const ain[] = {"p"};
    mica_status_t st;
    const char *e;
    net_t n;

    memset(&n, 0, sizeof n);
    if (mica_network_create(th_context(), &n.net) != MICA_OK)
        bail("network: %s", mica_context_error(th_context()));
    add_shape_input(&n, "p", 2, 0);
    add_passthrough(&n);
    add_layer(&n, "check", "Assertion", 1, ain, 0, NULL, NULL);
    st = mica_engine_build(n.net, NULL, &n.engine);
    e = mica_context_error(th_context());
    if (!ok(st != MICA_OK && e && strstr(e, "must be bool"),
            "an int32 condition is refused"))
        diag("status %s: '%s'", mica_status_name(st), e ? e : "");
    net_free(&n);
}

int main(void)
{
    static const int32_t a[2] = {3, 4}, b[2] = {3, 5}, c[2] = {2, 4};
    static const int32_t one = 1, two = 2, three = 3;
    uint32_t devs[2] = {MICA_DEVICE_CPU, MICA_DEVICE_CUDA};
    int i;

    plan_lazy();
    th_context();

    for (i = 0; i < 2; i++) {
        uint32_t d = devs[i];
        if (d == MICA_DEVICE_CUDA && !th_cuda()) {
            skip_block(8, "cuda: no usable GPU");
            continue;
        }
        run_case("p == q holds", d, 2, "equal", "p must equal q", a, a,
                 MICA_OK, NULL);
        run_case("p != q at element 1 fails at run time", d, 2, "equal",
                 "p must equal q", a, b, MICA_ERR_RUNTIME,
                 "p must equal q (element 1 of the condition is false)");
        run_case("p != q at element 0 fails at run time", d, 2, "equal",
                 "p must equal q", a, c, MICA_ERR_RUNTIME,
                 "element 0 of the condition is false");
        run_case("0-D p < q holds", d, 0, "less", NULL, &one, &two, MICA_OK,
                 NULL);
        run_case("0-D p < q fails, default message", d, 0, "less", NULL,
                 &three, &two, MICA_ERR_RUNTIME,
                 "assertion failed (the condition is false)");
        build_time_case(d);
        shape_values_case(d, 0);
        shape_values_case(d, 1);
    }
    int_condition_case();
    return exit_status();
}
