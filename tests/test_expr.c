/*
 * tests/test_expr.c - dimension expressions: folding, simplification,
 * hash-consing, evaluation and printing.
 */
#include <config.h>

#include <string.h>

#include "expr.h"
#include "tap.h"

int main(void)
{
    mica_expr_builder_t *eb;
    const mica_expr_t *n, *m, *c6, *e;
    char buf[128];
    int64_t v, syms[2] = {5, 7};

    plan(27);
    if (mica__expr_builder_create(&eb) != MICA_OK)
        bail("no builder");
    n = mica__expr_symbol(eb, 0, "N");
    m = mica__expr_symbol(eb, 1, "M");
    c6 = mica__expr_constant(eb, 6);

    ok(mica__expr_is_constant(c6) && mica__expr_constant_value(c6) == 6,
       "constant");
    ok(!mica__expr_is_constant(n), "a symbol is not constant");
    e = mica__expr_operation(eb, MICA_EXPR_PROD, c6,
                             mica__expr_constant(eb, 7));
    is_int(42, mica__expr_constant_value(e), "6*7 folds");
    ok(mica__expr_constant(eb, 42) == e, "constants are hash-consed");
    e = mica__expr_operation(eb, MICA_EXPR_PROD, n, c6);
    is_string("N*6", mica__expr_print(e, buf, sizeof buf), "N*6 prints");
    ok(mica__expr_operation(eb, MICA_EXPR_PROD, c6, n) == e,
       "products commute to one node");
    ok(mica__expr_operation(eb, MICA_EXPR_SUM, n, mica__expr_constant(eb, 0)) == n,
       "N+0 = N");
    ok(mica__expr_operation(eb, MICA_EXPR_PROD, n, mica__expr_constant(eb, 1)) == n,
       "N*1 = N");
    ok(mica__expr_operation(eb, MICA_EXPR_MAX, n, n) == n, "max(N, N) = N");
    e = mica__expr_operation(eb, MICA_EXPR_SUB, n, n);
    ok(mica__expr_is_constant(e) && mica__expr_constant_value(e) == 0,
       "N-N = 0");
    e = mica__expr_operation(eb, MICA_EXPR_FLOOR_DIV,
                             mica__expr_operation(eb, MICA_EXPR_PROD, n, c6), c6);
    ok(e == n, "(N*6)/6 = N");
    e = mica__expr_operation(eb, MICA_EXPR_PROD,
                             mica__expr_operation(eb, MICA_EXPR_SUM, n, m), c6);
    is_string("(N+M)*6", mica__expr_print(e, buf, sizeof buf),
              "parentheses where needed");
    ok(mica__expr_eval(e, syms, 2, &v) == MICA_OK && v == 72, "eval (5+7)*6");
    e = mica__expr_operation(eb, MICA_EXPR_SUB, n,
                             mica__expr_operation(eb, MICA_EXPR_SUB, m, c6));
    is_string("N-(M-6)", mica__expr_print(e, buf, sizeof buf),
              "right operand of a difference");
    ok(mica__expr_eval(e, syms, 2, &v) == MICA_OK && v == 4, "eval 5-(7-6)");
    e = mica__expr_operation(eb, MICA_EXPR_FLOOR_DIV,
                             mica__expr_constant(eb, -7),
                             mica__expr_constant(eb, 2));
    is_int(-4, mica__expr_constant_value(e), "floor_div rounds down");
    e = mica__expr_operation(eb, MICA_EXPR_CEIL_DIV,
                             mica__expr_constant(eb, 7),
                             mica__expr_constant(eb, 2));
    is_int(4, mica__expr_constant_value(e), "ceil_div rounds up");
    e = mica__expr_operation(eb, MICA_EXPR_CEIL_DIV, n, mica__expr_constant(eb, 2));
    is_string("ceil_div(N, 2)", mica__expr_print(e, buf, sizeof buf),
              "functions print by name");
    e = mica__expr_operation(eb, MICA_EXPR_LESS, n, m);
    ok(mica__expr_eval(e, syms, 2, &v) == MICA_OK && v == 1, "less");
    e = mica__expr_operation(eb, MICA_EXPR_EQUAL, n, m);
    ok(mica__expr_eval(e, syms, 2, &v) == MICA_OK && v == 0, "equal");
    e = mica__expr_operation(eb, MICA_EXPR_FLOOR_DIV, n,
                             mica__expr_constant(eb, 0));
    ok(e && mica__expr_eval(e, syms, 2, &v) == MICA_ERR_INVALID,
       "division by zero is an evaluation error, not a crash");
    e = mica__expr_operation(eb, MICA_EXPR_SUM,
                             mica__expr_operation(eb, MICA_EXPR_SUM, n,
                                                  mica__expr_constant(eb, 2)),
                             mica__expr_constant(eb, 3));
    is_string("N+5", mica__expr_print(e, buf, sizeof buf), "(N+2)+3 = N+5");
    ok(mica__expr_eval(n, syms, 0, &v) == MICA_ERR_INVALID,
       "an unbound symbol does not evaluate");
    ok(mica__expr_operation(eb, (mica_expr_op_t)99, n, m) == NULL,
       "an unknown operation is refused");
    /* Shared subexpressions, as a transformer's shape arithmetic makes:
     * e' = min(e + N, e * M) reads e twice, so 80 levels are a tree of
     * 2^80 leaves over 240 nodes.  Evaluation walks each node once; the
     * print stops where its buffer ends. */
    e = n;
    for (int k = 0; k < 80 && e; k++)
        e = mica__expr_operation(eb, MICA_EXPR_MIN,
                                 mica__expr_operation(eb, MICA_EXPR_SUM, e, n),
                                 mica__expr_operation(eb, MICA_EXPR_PROD, e,
                                                      m));
    ok(e != NULL, "80 levels of shared subexpressions");
    ok(e && mica__expr_eval(e, syms, 2, &v) == MICA_OK && v == 5 + 80 * 5,
       "evaluate in time, each shared node once (405)");
    ok(e && strlen(mica__expr_print(e, buf, sizeof buf)) == sizeof buf - 1,
       "print in time, up to the buffer's end");
    mica__expr_builder_destroy(eb);
    return exit_status();
}
