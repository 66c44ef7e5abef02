/*
 * registry/rules.c - the fusion rules of a loaded module (mica/module.h),
 * checked once at load: what the builder (core/fusion.c) reads later is
 * well formed, and its type is one the module registered.
 */
#include <config.h>

#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most steps, inputs, conditions and params of one rule. */
#define MAX_STEPS 16
#define MAX_REFS 64
#define MAX_ITEMS 64

/* The version-1 size of a rule: everything up to its reserved tail. */
#define RULE_V1_SIZE offsetof(mica_fusion_rule_t, reserved2_)

/* Whether rule r's struct_size covers appended member m. */
#define RULE_HAS(r, m) \
    ((r)->struct_size >= offsetof(mica_fusion_rule_t, m) + sizeof((r)->m))

/* Whether `type` is a type module m registered. */
static int own_type(const mica_context_t *ctx, const mica__module_t *m,
                    const char *type)
{
    const mica__registry_t *reg = mica__registry_peek(ctx);
    int32_t i;
    for (i = 0; reg && i < reg->nb_entries; i++)
        if (reg->entries[i].module == m &&
            strcmp(reg->entries[i].creator->type, type) == 0)
            return 1;
    return 0;
}

static int bad_name(const char *s)
{
    return !s || !s[0];
}

/* Why step k of r is malformed, or NULL. */
static const char *bad_step(const mica_fusion_rule_t *r, int32_t k, char *why,
                            size_t len)
{
    const mica_fusion_step_t *s = &r->steps[k];
    int32_t i, j;

    if (bad_name(s->type))
        return snprintf(why, len, "step %d has no type", (int)k), why;
    if (s->input < MICA_FUSION_ANY_INPUT || s->input >= MAX_REFS ||
        s->nb_inputs < 0 || s->nb_inputs > MAX_REFS ||
        (s->nb_inputs && s->input >= s->nb_inputs))
        return snprintf(why, len, "step %d (%s): input %d or nb_inputs %d "
                        "out of range", (int)k, s->type, (int)s->input,
                        (int)s->nb_inputs), why;
    if (s->nb_conds < 0 || s->nb_conds > MAX_ITEMS ||
        (s->nb_conds && !s->conds))
        return snprintf(why, len, "step %d (%s): %d conditions without an "
                        "array", (int)k, s->type, (int)s->nb_conds), why;
    for (i = 0; i < s->nb_conds; i++) {
        const mica_fusion_cond_t *c = &s->conds[i];
        if (bad_name(c->field) || c->nb_values < 0 ||
            c->nb_values > MAX_ITEMS || (c->nb_values && !c->values))
            return snprintf(why, len, "step %d (%s): condition %d has no "
                            "field or values", (int)k, s->type, (int)i), why;
        for (j = 0; j < c->nb_values; j++)
            if (!c->values[j])
                return snprintf(why, len, "step %d (%s): condition on '%s' "
                                "has a NULL value", (int)k, s->type,
                                c->field), why;
    }
    return NULL;
}

/* Whether `t` names a tensor of a step (an input, OTHER_INPUT, or an
 * output). */
static int bad_tensor(int32_t t)
{
    return t >= MAX_REFS ||
           (t < 0 && t != MICA_FUSION_OTHER_INPUT &&
            (t > MICA_FUSION_OUTPUT(0) || t < MICA_FUSION_OUTPUT(MAX_REFS)));
}

/* Why the appended members of r (links, tensor tests, const params) are
 * malformed, or NULL. */
static char *bad_dag(const mica_fusion_rule_t *r, char *why, size_t len)
{
    int32_t k, j;

    if (RULE_HAS(r, nb_links) && r->nb_links) {
        if (r->nb_links < 0 || r->nb_links > MAX_ITEMS || !r->links)
            return snprintf(why, len, "%d links without an array",
                            (int)r->nb_links), why;
        for (k = 0; k < r->nb_links; k++) {
            const mica_fusion_link_t *l = &r->links[k];
            if (l->step < (l->from == MICA_FUSION_OUTER ? 0 : 1) ||
                l->step >= r->nb_steps ||
                l->input < MICA_FUSION_ANY_INPUT || l->input >= MAX_REFS ||
                l->from < MICA_FUSION_OUTER || l->from == l->step ||
                l->from >= r->nb_steps || (l->from > l->step && !l->step) ||
                l->output < 0 || l->output >= MAX_REFS)
                return snprintf(why, len, "link %d (step %d input %d from "
                                "%d output %d): a link goes from a step (or "
                                "MICA_FUSION_OUTER) to another one, step 0 "
                                "reading outer tensors only",
                                (int)k, (int)l->step, (int)l->input,
                                (int)l->from, (int)l->output), why;
        }
        for (j = 1; j < r->nb_steps; j++) {
            for (k = 0; k < r->nb_links; k++)
                if ((r->links[k].step == j && r->links[k].from >= 0 &&
                     r->links[k].from < j) ||
                    (r->links[k].from == j && r->links[k].step < j))
                    break;
            if (k == r->nb_links)
                return snprintf(why, len, "step %d (%s) has no link from or "
                                "into an earlier step", (int)j,
                                r->steps[j].type), why;
        }
    }
    if (RULE_HAS(r, nb_tensor_conds) && r->nb_tensor_conds) {
        if (r->nb_tensor_conds < 0 || r->nb_tensor_conds > MAX_ITEMS ||
            !RULE_HAS(r, tensor_conds) || !r->tensor_conds)
            return snprintf(why, len, "%d tensor tests without an array",
                            (int)r->nb_tensor_conds), why;
        for (k = 0; k < r->nb_tensor_conds; k++) {
            const mica_fusion_tensor_cond_t *c = &r->tensor_conds[k];
            if (c->step < 0 || c->step >= r->nb_steps ||
                bad_tensor(c->tensor) || c->constant < 0 ||
                c->constant > MICA_FUSION_SPLAT ||
                (c->dtypes >> MICA_DTYPE_COUNT_) != 0 ||
                c->min_rank < -1 || c->max_rank < -1 ||
                c->min_rank > MICA_MAX_DIMS || c->max_rank > MICA_MAX_DIMS ||
                !(c->rtol >= 0.0))
                return snprintf(why, len, "tensor test %d (step %d, tensor "
                                "%d) is out of range", (int)k, (int)c->step,
                                (int)c->tensor), why;
        }
    }
    if (RULE_HAS(r, nb_const_params) && r->nb_const_params) {
        if (r->nb_const_params < 0 || r->nb_const_params > MAX_ITEMS ||
            !RULE_HAS(r, const_params) || !r->const_params)
            return snprintf(why, len, "%d const params without an array",
                            (int)r->nb_const_params), why;
        for (k = 0; k < r->nb_const_params; k++) {
            const mica_fusion_const_param_t *c = &r->const_params[k];
            if (bad_name(c->field) || c->step < 0 ||
                c->step >= r->nb_steps || bad_tensor(c->tensor) ||
                c->op < MICA_FUSION_VALUE || c->op > MICA_FUSION_PRODUCT)
                return snprintf(why, len, "const param %d: no name, or step, "
                                "tensor or op out of range", (int)k), why;
            if (c->op == MICA_FUSION_PRODUCT) {
                /* into an earlier param of its field */
                for (j = 0; j < k; j++)
                    if (r->const_params[j].op != MICA_FUSION_PRODUCT &&
                        !bad_name(r->const_params[j].field) &&
                        strcmp(r->const_params[j].field, c->field) == 0)
                        break;
                if (j == k)
                    return snprintf(why, len, "const param %d: a product "
                                    "into '%s', which no earlier const "
                                    "param sets", (int)k, c->field), why;
            }
        }
    }
    if (RULE_HAS(r, nb_weight_params) && r->nb_weight_params) {
        if (r->nb_weight_params < 0 || r->nb_weight_params > MAX_ITEMS ||
            !RULE_HAS(r, weight_params) || !r->weight_params)
            return snprintf(why, len, "%d weights params without an array",
                            (int)r->nb_weight_params), why;
        for (k = 0; k < r->nb_weight_params; k++) {
            const mica_fusion_weight_param_t *w = &r->weight_params[k];
            if (bad_name(w->field) || w->step < 0 ||
                w->step >= r->nb_steps || bad_tensor(w->tensor))
                return snprintf(why, len, "weights param %d: no name, or "
                                "step or tensor out of range", (int)k), why;
        }
    }
    return NULL;
}

/* Why rule r (struct_size checked) is malformed, or NULL. */
static const char *bad_rule(const mica_context_t *ctx, const mica__module_t *m,
                            const mica_fusion_rule_t *r, char *why, size_t len)
{
    int dag = RULE_HAS(r, nb_links) && r->nb_links > 0;
    int32_t k;

    if (!r->steps || r->nb_steps < 1 || r->nb_steps > MAX_STEPS)
        return snprintf(why, len, "%d steps: a pattern needs 1 to %d",
                        (int)r->nb_steps, MAX_STEPS), why;
    if (bad_name(r->type))
        return snprintf(why, len, "no type to replace the pattern with"), why;
    for (k = 0; k < r->nb_steps; k++)
        if (bad_step(r, k, why, len))
            return why;
    if (r->nb_inputs < 0 || r->nb_inputs > MAX_REFS ||
        (r->nb_inputs && !r->inputs))
        return snprintf(why, len, "%d inputs without an array",
                        (int)r->nb_inputs), why;
    for (k = 0; k < r->nb_inputs; k++) {
        const mica_fusion_ref_t *f = &r->inputs[k];
        if (f->step < 0 || f->step >= r->nb_steps ||
            f->input < MICA_FUSION_OTHER_INPUT || f->input >= MAX_REFS ||
            (f->input == MICA_FUSION_OTHER_INPUT && f->step == 0) ||
            (f->input == MICA_FUSION_ANY_INPUT) ||
            (f->step > 0 && !dag && f->input == r->steps[f->step].input))
            return snprintf(why, len, "input %d names step %d input %d, "
                            "which is not an outside input of the pattern",
                            (int)k, (int)f->step, (int)f->input), why;
    }
    if (r->nb_params < 0 || r->nb_params > MAX_ITEMS ||
        (r->nb_params && !r->params) || r->nb_constants < 0 ||
        r->nb_constants > MAX_ITEMS || (r->nb_constants && !r->constants))
        return snprintf(why, len, "params or constants without an array"),
               why;
    for (k = 0; k < r->nb_params; k++)
        if (bad_name(r->params[k].field) || bad_name(r->params[k].from) ||
            r->params[k].step < 0 || r->params[k].step >= r->nb_steps)
            return snprintf(why, len, "param %d: no name or step %d out of "
                            "range", (int)k, (int)r->params[k].step), why;
    for (k = 0; k < r->nb_constants; k++)
        if (bad_name(r->constants[k].name) || r->constants[k].count < 1 ||
            !r->constants[k].data)
            return snprintf(why, len, "constant %d has no name or value",
                            (int)k), why;
    if (bad_dag(r, why, len))
        return why;
    if (!own_type(ctx, m, r->type))
        return snprintf(why, len, "its type '%s' is not a type this module "
                        "registered", r->type), why;
    return NULL;
}

/* Append s to buf (len bytes, *at used), truncating. */
static void put(char *buf, size_t len, size_t *at, const char *s)
{
    int n = snprintf(buf + *at, len - *at, "%s", s);
    *at += n < 0 ? 0 : (size_t)n;
    if (*at >= len)
        *at = len - 1;
}

/* Rule r's pattern as text (mica_fusion_rule_info_t), malloc'd. */
static char *pattern(const mica_fusion_rule_t *r)
{
    char buf[1024];
    size_t at = 0;
    int32_t k, i, j;

    buf[0] = '\0';
    for (k = 0; k < r->nb_steps; k++) {
        const mica_fusion_step_t *s = &r->steps[k];
        put(buf, sizeof buf, &at, k ? " -> " : "");
        put(buf, sizeof buf, &at, s->type);
        for (i = 0; i < s->nb_conds; i++) {
            const mica_fusion_cond_t *c = &s->conds[i];
            put(buf, sizeof buf, &at, i ? ", " : "[");
            if (!c->nb_values)
                put(buf, sizeof buf, &at, "!");
            put(buf, sizeof buf, &at, c->field);
            for (j = 0; j < c->nb_values; j++) {
                put(buf, sizeof buf, &at, j ? "|" : "=");
                put(buf, sizeof buf, &at, c->values[j]);
            }
        }
        if (s->nb_conds)
            put(buf, sizeof buf, &at, "]");
    }
    return mica__strdup(buf);
}

int32_t mica_registry_nb_fusion_rules(const mica_context_t *ctx)
{
    const mica__registry_t *reg = ctx ? mica__registry_peek(ctx) : NULL;
    int32_t i, n = 0;
    for (i = 0; reg && i < reg->nb_modules; i++)
        n += reg->modules[i]->nb_rules;
    return n;
}

mica_status_t mica_registry_fusion_rule(const mica_context_t *ctx,
                                        int32_t index,
                                        mica_fusion_rule_info_t *info)
{
    const mica__registry_t *reg = ctx ? mica__registry_peek(ctx) : NULL;
    mica_fusion_rule_info_t full;
    int32_t i;

    if (!info || index < 0)
        return MICA_ERR_INVALID;
    for (i = 0; reg && i < reg->nb_modules; i++) {
        const mica__module_t *m = reg->modules[i];
        if (index >= m->nb_rules) {
            index -= m->nb_rules;
            continue;
        }
        memset(&full, 0, sizeof full);
        full.struct_size = sizeof full;
        full.nb_steps = m->rules[index]->nb_steps;
        full.name = m->rules[index]->name;
        full.type = m->rules[index]->type;
        full.pattern = m->patterns[index];
        full.module_file = m->path;
        mica__fill_out(info, &full, sizeof full, sizeof full);
        return MICA_OK;
    }
    return MICA_ERR_INVALID;
}

mica_status_t mica__rules_collect(mica_context_t *ctx, mica__module_t *m)
{
    const mica_module_desc_t *d = m->desc;
    int32_t i, n;

    if (d->struct_size < offsetof(mica_module_desc_t, reserved3_) ||
        d->nb_fusion_rules == 0)
        return MICA_OK;
    n = d->nb_fusion_rules;
    if (n < 0 || n > 1024 || !d->fusion_rules) {
        mica__problem(ctx, "%s: %d fusion rules without an array; none "
                      "used", m->path, (int)n);
        return MICA_OK;
    }
    m->rules = calloc((size_t)n, sizeof *m->rules);
    m->patterns = calloc((size_t)n, sizeof *m->patterns);
    if (!m->rules || !m->patterns)
        return mica__fail(ctx, MICA_ERR_NOMEM, "%s: out of memory", m->path);
    for (i = 0; i < n; i++) {
        const mica_fusion_rule_t *r = d->fusion_rules[i];
        char why[512];
        int32_t j;

        if (!r || r->struct_size < RULE_V1_SIZE || bad_name(r->name)) {
            mica__problem(ctx, "%s: fusion rule %d: no name, or struct_size "
                          "too small; skipped", m->path, (int)i);
            continue;
        }
        if (bad_rule(ctx, m, r, why, sizeof why)) {
            mica__problem(ctx, "%s: fusion rule '%s': %s; skipped", m->path,
                          r->name, why);
            continue;
        }
        for (j = 0; j < m->nb_rules; j++)
            if (strcmp(m->rules[j]->name, r->name) == 0)
                break;
        if (j < m->nb_rules) {
            mica__problem(ctx, "%s: fusion rule '%s' is declared twice; "
                          "skipped", m->path, r->name);
            continue;
        }
        if (!(m->patterns[m->nb_rules] = pattern(r)))
            return mica__fail(ctx, MICA_ERR_NOMEM, "%s: out of memory",
                              m->path);
        m->rules[m->nb_rules++] = r;
    }
    if (m->nb_rules)
        mica__log(ctx, MICA_LOG_DEBUG, "%s: %d fusion rule%s", m->path,
                  (int)m->nb_rules, m->nb_rules == 1 ? "" : "s");
    return MICA_OK;
}
