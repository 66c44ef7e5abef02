/*
 * modules/einsum/einsum_parse.c - the Einsum equation: parsing (with the
 * position of any problem), binding to the inputs' ranks (ellipses
 * expanded, the implicit output made), and the size of every label.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "mica/kit.h"

#include "einsum.h"

static int label_of(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    return -1;
}

static char letter_of(int l)
{
    return (char)(l < 26 ? 'A' + l : 'a' + (l - 26));
}

/* One more label (or the ellipsis) in the term being read. */
static mica_status_t add(int8_t *term, int32_t *len, int8_t v, int *ell,
                         const char *text, size_t at, mica_error_t *err)
{
    int32_t labels = *len - (*ell ? 1 : 0);

    if (v == MICA__EIN_ELLIPSIS) {
        if (*ell)
            return MICA_KIT_FAIL(err, "equation \"%s\": a second '...' in "
                                 "one term at position %zu", text, at + 1);
        *ell = 1;
    } else if (labels == MICA_MAX_DIMS) {
        return MICA_KIT_FAIL(err, "equation \"%s\": more than %d labels in "
                             "one term at position %zu (tensors have at "
                             "most %d dimensions)", text, MICA_MAX_DIMS,
                             at + 1, MICA_MAX_DIMS);
    }
    term[(*len)++] = v;
    return MICA_OK;
}

/* The checks of an explicit output once the whole text is read. */
static mica_status_t check_output(const mica__ein_eq_t *eq, const char *text,
                                  const size_t *out_at, size_t arrow,
                                  mica_error_t *err)
{
    int32_t i, j, t, found, any_ell = 0, out_ell = 0;

    for (t = 0; t < eq->nb_terms; t++)
        for (j = 0; j < eq->len[t]; j++)
            any_ell |= eq->term[t][j] == MICA__EIN_ELLIPSIS;
    for (i = 0; i < eq->out_len; i++) {
        int8_t l = eq->out[i];
        if (l == MICA__EIN_ELLIPSIS) {
            out_ell = 1;
            continue;
        }
        for (j = 0; j < i; j++)
            if (eq->out[j] == l)
                return MICA_KIT_FAIL(err, "equation \"%s\": output label "
                                     "'%c' at position %zu appears twice in "
                                     "the output", text, letter_of(l),
                                     out_at[i] + 1);
        found = 0;
        for (t = 0; t < eq->nb_terms && !found; t++)
            for (j = 0; j < eq->len[t]; j++)
                found |= eq->term[t][j] == l;
        if (!found)
            return MICA_KIT_FAIL(err, "equation \"%s\": output label '%c' at "
                                 "position %zu appears in no input", text,
                                 letter_of(l), out_at[i] + 1);
    }
    if (any_ell && !out_ell)
        return MICA_KIT_FAIL(err, "equation \"%s\": the inputs have '...' "
                             "but the output after '->' at position %zu has "
                             "none", text, arrow + 1);
    return MICA_OK;
}

mica_status_t mica__ein_parse(const char *text, mica__ein_eq_t *eq,
                              mica_error_t *err)
{
    size_t i, n = strlen(text), arrow = 0, out_at[MICA_MAX_DIMS + 1];
    int ell = 0, in_out = 0;
    int8_t *term;
    int32_t *len;
    mica_status_t st;

    memset(eq, 0, sizeof *eq);
    eq->nb_terms = 1;
    eq->pos[0] = 1;
    term = eq->term[0];
    len = &eq->len[0];
    for (i = 0; i < n; i++) {
        char c = text[i];
        int l = label_of(c);
        if (c == ' ')
            continue;
        if (l >= 0) {
            if (in_out)
                out_at[*len] = i;
            if ((st = add(term, len, (int8_t)l, &ell, text, i, err)) != MICA_OK)
                return st;
        } else if (c == '.') {
            if (i + 2 >= n || text[i + 1] != '.' || text[i + 2] != '.')
                return MICA_KIT_FAIL(err, "equation \"%s\": a '.' at position "
                                     "%zu that is not part of '...'", text,
                                     i + 1);
            if (in_out)
                out_at[*len] = i;
            if ((st = add(term, len, MICA__EIN_ELLIPSIS, &ell, text, i,
                          err)) != MICA_OK)
                return st;
            i += 2;
        } else if (c == ',') {
            if (in_out)
                return MICA_KIT_FAIL(err, "equation \"%s\": a ',' at "
                                     "position %zu in the output (after "
                                     "'->')", text, i + 1);
            if (eq->nb_terms == MICA__EIN_MAX_IN)
                return MICA_KIT_FAIL(err, "equation \"%s\": more than %d "
                                     "inputs at position %zu", text,
                                     MICA__EIN_MAX_IN, i + 1);
            eq->pos[eq->nb_terms] = (int32_t)i + 2;
            term = eq->term[eq->nb_terms];
            len = &eq->len[eq->nb_terms];
            eq->nb_terms++;
            ell = 0;
        } else if (c == '-' && i + 1 < n && text[i + 1] == '>') {
            if (in_out)
                return MICA_KIT_FAIL(err, "equation \"%s\": a second '->' at "
                                     "position %zu", text, i + 1);
            in_out = 1;
            arrow = i;
            eq->has_output = 1;
            term = eq->out;
            len = &eq->out_len;
            ell = 0;
            i++;
        } else if (c == '-' || c == '>') {
            return MICA_KIT_FAIL(err, "equation \"%s\": a '%c' at position "
                                 "%zu that is not part of '->'", text, c,
                                 i + 1);
        } else {
            return MICA_KIT_FAIL(err, "equation \"%s\": the character '%c' "
                                 "at position %zu is not a label (a letter), "
                                 "',', '->', '...' or a space", text, c,
                                 i + 1);
        }
    }
    if (in_out)
        return check_output(eq, text, out_at, arrow, err);
    return MICA_OK;
}

/* The text of term t ("ij..." form) into buf. */
static const char *term_text(const mica__ein_eq_t *eq, int32_t t, char *buf)
{
    int32_t j, o = 0;
    for (j = 0; j < eq->len[t]; j++) {
        if (eq->term[t][j] == MICA__EIN_ELLIPSIS) {
            memcpy(buf + o, "...", 3);
            o += 3;
        } else {
            buf[o++] = letter_of(eq->term[t][j]);
        }
    }
    buf[o] = '\0';
    return buf;
}

mica_status_t mica__ein_bind(const mica__ein_eq_t *eq, int32_t nb_in,
                             const int32_t *ranks, mica__ein_bind_t *b,
                             mica_error_t *err)
{
    int32_t t, j, e, big = 0, ell[MICA__EIN_MAX_IN], count[MICA__EIN_LABELS];
    char buf[4 * MICA_MAX_DIMS + 8];

    if (eq->nb_terms != nb_in)
        return MICA_KIT_FAIL(err, "the equation has %d term%s but the layer "
                             "has %d input%s", (int)eq->nb_terms,
                             eq->nb_terms == 1 ? "" : "s", (int)nb_in,
                             nb_in == 1 ? "" : "s");
    memset(b, 0, sizeof *b);
    memset(count, 0, sizeof count);
    b->nb_in = nb_in;
    for (t = 0; t < nb_in; t++) {
        int has = 0;
        for (j = 0; j < eq->len[t]; j++)
            has |= eq->term[t][j] == MICA__EIN_ELLIPSIS;
        ell[t] = ranks[t] - (eq->len[t] - has);
        if ((!has && ell[t] != 0) || ell[t] < 0)
            return MICA_KIT_FAIL(err, "term %d \"%s\" (position %d) names %s%d "
                                 "dimension%s but input %d has rank %d",
                                 (int)t + 1, term_text(eq, t, buf),
                                 (int)eq->pos[t], has ? "at least " : "",
                                 (int)(eq->len[t] - has),
                                 eq->len[t] - has == 1 ? "" : "s", (int)t,
                                 (int)ranks[t]);
        if (!has)
            ell[t] = 0;
        big = ell[t] > big ? ell[t] : big;
    }
    for (t = 0; t < nb_in; t++) {
        int32_t d = 0;
        b->rank[t] = ranks[t];
        for (j = 0; j < eq->len[t]; j++) {
            if (eq->term[t][j] == MICA__EIN_ELLIPSIS) {
                for (e = 0; e < ell[t]; e++)
                    b->lab[t][d++] =
                        (int8_t)(MICA__EIN_LETTERS + big - ell[t] + e);
            } else {
                count[eq->term[t][j]]++;
                b->lab[t][d++] = eq->term[t][j];
            }
        }
    }
    if (eq->has_output) {
        for (j = 0; j < eq->out_len; j++) {
            if (eq->out[j] != MICA__EIN_ELLIPSIS) {
                b->out[b->out_rank++] = eq->out[j];
                continue;
            }
            if (b->out_rank + big > MICA_MAX_DIMS)
                break;
            for (e = 0; e < big; e++)
                b->out[b->out_rank++] = (int8_t)(MICA__EIN_LETTERS + e);
        }
        if (j < eq->out_len || b->out_rank > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err, "the output would have more than %d "
                                 "dimensions", MICA_MAX_DIMS);
        return MICA_OK;
    }
    /* Implicit: the ellipsis dimensions, then the labels seen once, in
     * alphabetical (ASCII) order. */
    for (e = 0; e < big; e++)
        b->out[b->out_rank++] = (int8_t)(MICA__EIN_LETTERS + e);
    for (j = 0; j < MICA__EIN_LETTERS; j++)
        if (count[j] == 1) {
            if (b->out_rank == MICA_MAX_DIMS)
                return MICA_KIT_FAIL(err, "the implicit output would have "
                                     "more than %d dimensions",
                                     MICA_MAX_DIMS);
            b->out[b->out_rank++] = (int8_t)j;
        }
    return MICA_OK;
}

/* A label for messages: "'j'" or "'...' dimension 2". */
static const char *label_text(int l, char *buf, size_t len)
{
    if (l < MICA__EIN_LETTERS)
        snprintf(buf, len, "'%c'", letter_of(l));
    else
        snprintf(buf, len, "'...' dimension %d", l - MICA__EIN_LETTERS);
    return buf;
}

mica_status_t mica__ein_sizes(const mica__ein_bind_t *b,
                              const int64_t (*dims)[MICA_MAX_DIMS],
                              int64_t *size, mica_error_t *err)
{
    int32_t t, d, d2, from[MICA__EIN_LABELS];
    char name[32];

    for (d = 0; d < MICA__EIN_LABELS; d++) {
        size[d] = -1;
        from[d] = -1;
    }
    for (t = 0; t < b->nb_in; t++)
        for (d = 0; d < b->rank[t]; d++) {
            int l = b->lab[t][d];
            int64_t s = dims[t][d];
            if (s < 0)
                continue;
            for (d2 = 0; d2 < d; d2++)
                if (b->lab[t][d2] == l && dims[t][d2] >= 0 &&
                    dims[t][d2] != s)
                    return MICA_KIT_FAIL(err, "input %d repeats label %s "
                                         "(a diagonal) with sizes %lld and "
                                         "%lld", (int)t,
                                         label_text(l, name, sizeof name),
                                         (long long)dims[t][d2],
                                         (long long)s);
            if (size[l] < 0 || (size[l] == 1 && s != 1)) {
                size[l] = s;
                from[l] = t;
            } else if (s != 1 && s != size[l]) {
                return MICA_KIT_FAIL(err, "label %s is %lld in input %d but "
                                     "%lld in input %d (sizes must be equal, "
                                     "or 1 to broadcast)",
                                     label_text(l, name, sizeof name),
                                     (long long)size[l], (int)from[l],
                                     (long long)s, (int)t);
            }
        }
    return MICA_OK;
}
