/*
 * tools/modules_detail.c - `mica modules TYPE`: one layer type in detail,
 * as gst-inspect shows one element: its namespaces and versions, and for
 * each version the role, every implementation (devices, priority, module,
 * ABI version, file), the modules that provide it and every param (kind,
 * count, required, default, allowed values, description).
 *
 * It shows what the registry knows and nothing more: the module ABI
 * describes a type by its params, not by its inputs, outputs or their
 * element types, so for those it points to the manifest reference.
 * An unknown type is an error naming the closest known types.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_modules.h"

#ifndef MICA_DOC_DIR
#define MICA_DOC_DIR "the documentation folder"
#endif

#define WRAP_COLUMN 78

/* ---- the closest known types ------------------------------------------ */

/* Edit distance between a and b, ignoring case (names past 63 bytes are
 * compared on their first 63). */
static size_t distance(const char *a, const char *b)
{
    size_t row[64], la = strlen(a), lb = strlen(b), i, j;
    if (la > 63)
        la = 63;
    if (lb > 63)
        lb = 63;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1])
                                  == tolower((unsigned char)b[j - 1])
                              ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* A candidate for "closest": a type name and its distance. */
typedef struct near {
    const char *type;
    size_t d;
} near_t;

static int near_cmp(const void *pa, const void *pb)
{
    const near_t *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return strcmp(a->type, b->type);
}

#define NB_CLOSEST 3

/* "mica: unknown layer type 'X' (closest: A, B, C)". */
static int unknown_type(mica_context_t *ctx, const char *type)
{
    int32_t n = mica_registry_count(ctx), k, nb = 0, i;
    near_t *v = calloc((size_t)n + 1, sizeof(*v));
    char list[512];
    size_t len = 0;

    if (!v)
        return cli_error("out of memory");
    for (k = 0; k < n; k++) {
        mica_creator_info_t c = {.struct_size = sizeof(mica_creator_info_t)};
        if (mica_registry_get(ctx, k, &c) != MICA_OK)
            continue;
        for (i = 0; i < nb && strcmp(v[i].type, c.type); i++)
            ;
        if (i == nb) {
            v[nb].type = c.type;
            v[nb++].d = distance(type, c.type);
        }
    }
    if (!nb) {
        free(v);
        return cli_error("unknown layer type '%s': no layer type is "
                         "registered ('mica modules' shows the load "
                         "problems)", type);
    }
    qsort(v, (size_t)nb, sizeof(*v), near_cmp);
    list[0] = '\0';
    /* The nearest, and those at most one edit further, NB_CLOSEST at most. */
    for (i = 0; i < nb && i < NB_CLOSEST && v[i].d <= v[0].d + 1
                && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                i ? ", " : "", v[i].type);
    free(v);
    return cli_error("unknown layer type '%s' (closest: %s)", type, list);
}

/* Append `item` to the ", "-separated list in buf (len bytes) unless it
 * is there already; an item that does not fit is left out. */
static void add_once(char *buf, size_t len, const char *item)
{
    size_t n = strlen(buf), k = strlen(item);
    const char *p = buf;
    while ((p = strstr(p, item))) {
        if ((p == buf || p[-1] == ' ') && (p[k] == ',' || !p[k]))
            return;
        p += k;
    }
    if (n + k + 3 < len)
        snprintf(buf + n, len - n, "%s%s", n ? ", " : "", item);
}

/* A namespace for people: the default one is "(default)". */
static const char *ns_label(const char *ns)
{
    return ns && ns[0] ? ns : "(default)";
}

int cli_mod_check(mica_context_t *ctx, const cli_mod_filter_t *flt)
{
    int32_t n = mica_registry_count(ctx), k;
    char nss[512] = "", vers[256] = "", num[16];
    int has_type = 0, has_ns = 0;

    for (k = 0; k < n; k++) {
        mica_creator_info_t c = {.struct_size = sizeof(mica_creator_info_t)};
        cli_mod_filter_t any_version = *flt;
        if (mica_registry_get(ctx, k, &c) != MICA_OK
            || strcmp(c.type, flt->type))
            continue;
        if (cli_mod_match(flt, &c))
            return CLI_OK;
        has_type = 1;
        add_once(nss, sizeof(nss), ns_label(c.ns));
        any_version.version = 0;
        if (cli_mod_match(&any_version, &c)) {
            has_ns = 1;
            snprintf(num, sizeof(num), "%d", (int)c.version);
            add_once(vers, sizeof(vers), num);
        }
    }
    if (!has_type)
        return unknown_type(ctx, flt->type);
    if (!has_ns)
        return cli_error("layer type '%s' has no namespace '%s' "
                         "(namespaces: %s)", flt->type, flt->ns, nss);
    return cli_error("layer type '%s' has no version %d in namespace %s "
                     "(versions: %s)", flt->type, (int)flt->version,
                     ns_label(flt->ns), vers);
}

/* ---- the detail -------------------------------------------------------- */

/* A byte that separates words: a space or a control character (which a
 * module's strings may hold; they never reach the terminal). */
static int is_gap(char c)
{
    return c && ((unsigned char)c <= ' ' || c == 0x7f);
}

/*
 * Print `text` after `label` (padded to `width`), wrapped at WRAP_COLUMN on
 * spaces, continuation lines indented to the text's column; control
 * characters are printed as spaces.
 */
static void wrapped(FILE *f, int indent, int width, const char *label,
                    const char *text)
{
    int col = indent + width, start = col;
    fprintf(f, "%*s%-*s", indent, "", width, label);
    while (is_gap(*text))
        text++;
    while (*text) {
        int w = 0;
        while (text[w] && !is_gap(text[w]))
            w++;
        if (col > start && col + 1 + w > WRAP_COLUMN) {
            fprintf(f, "\n%*s", start, "");
            col = start;
        } else if (col > start) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", w, text);
        col += w;
        text += w;
        while (is_gap(*text))
            text++;
    }
    fputc('\n', f);
}

/* What a role means for the manifest (mica_layer_role_t, by value). */
static const char *role_text(uint32_t role)
{
    static const char *const text[] = {
        "an ordinary layer",
        "a loop boundary: bounds the trips of the loop it names",
        "a loop boundary: a value carried from one trip to the next",
        "a loop boundary: one slice of its input per trip",
        "a loop boundary: a value that leaves the loop",
        "a conditional boundary: the condition of the conditional it names",
        "a conditional boundary: a value entering the conditional",
        "a conditional boundary: the value of the branch taken",
        ("refused at build time where its condition is constant and false, "
         "else checked at run time")};
    return role < sizeof(text) / sizeof(text[0]) ? text[role]
                                                 : "unknown to this mica";
}

/* Whether two field schemas say the same thing. */
static int same_fields(const mica_layer_creator_t *a,
                       const mica_layer_creator_t *b)
{
    int32_t i, k;
    if (a->fields == b->fields && a->nb_fields == b->nb_fields)
        return 1;
    if (a->nb_fields != b->nb_fields)
        return 0;
    for (i = 0; i < a->nb_fields; i++) {
        const mica_field_schema_t *x = &a->fields[i], *y = &b->fields[i];
        char dx[512], dy[512];
        if (strcmp(x->name, y->name) || x->type != y->type
            || x->count != y->count || !x->required != !y->required
            || !x->doc != !y->doc || (x->doc && strcmp(x->doc, y->doc)))
            return 0;
        cli_field_default(x, dx, sizeof(dx));
        cli_field_default(y, dy, sizeof(dy));
        if (strcmp(dx, dy) || !x->enum_values != !y->enum_values)
            return 0;
        for (k = 0; x->enum_values && x->enum_values[k]; k++)
            if (!y->enum_values[k] || strcmp(x->enum_values[k],
                                             y->enum_values[k]))
                return 0;
        if (x->enum_values && y->enum_values[k])
            return 0;
    }
    return 1;
}

/* One param: a block of labelled lines. */
static void print_field(FILE *f, const mica_field_schema_t *s)
{
    char buf[1024], dflt[512];
    size_t n = 0;
    int k;

    wrapped(f, 4, 0, "", s->name);
    wrapped(f, 6, 13, "kind", cli_field_kind(s->type));
    if (s->count == 1)
        snprintf(buf, sizeof(buf), "1");
    else if (s->count == MICA_COUNT_ANY)
        snprintf(buf, sizeof(buf), "a list of any length");
    else
        snprintf(buf, sizeof(buf), "a list of %d", (int)s->count);
    wrapped(f, 6, 13, "count", buf);
    wrapped(f, 6, 13, "required", s->required ? "yes" : "no");
    cli_field_default(s, dflt, sizeof(dflt));
    wrapped(f, 6, 13, "default", strcmp(dflt, "-") ? dflt
                                 : s->required ? "none"
                                 : "none (when absent, the layer decides)");
    buf[0] = '\0';
    if (s->type == MICA_FIELD_ENUM)
        for (k = 0; s->enum_values && s->enum_values[k] && n < sizeof(buf);
             k++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
                                  k ? ", " : "", s->enum_values[k]);
    else if (s->type == MICA_FIELD_DTYPE)
        for (k = 0; k < MICA_DTYPE_COUNT_ && n < sizeof(buf); k++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
                                  k ? ", " : "",
                                  mica_dtype_name((mica_dtype_t)k));
    else if (s->type == MICA_FIELD_BOOL)
        snprintf(buf, sizeof(buf), "true, false");
    else if (s->type == MICA_FIELD_WEIGHTS)
        snprintf(buf, sizeof(buf), "the name of a weights entry, or a blob "
                                   "{dtype, shape, data | file | npy}");
    if (buf[0])
        wrapped(f, 6, 13, "values", buf);
    if (s->doc)
        wrapped(f, 6, 13, "description", s->doc);
}

/* Every param of a creator, or "none". */
static void print_fields(FILE *f, const mica_layer_creator_t *c)
{
    int32_t i;
    if (!c->nb_fields) {
        fprintf(f, "    none\n");
        return;
    }
    for (i = 0; i < c->nb_fields; i++)
        print_field(f, &c->fields[i]);
}

/* The registry's choice order on a device: priority, then name. */
static int by_priority(const void *pa, const void *pb)
{
    const mica_creator_info_t *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    return strcmp(a->implementation, b->implementation);
}

/* One (namespace, version) of the type: its n creators in v; `highest`
 * when it is the version a layer without `version:` gets. */
static int print_version(FILE *f, mica_creator_info_t *v, int32_t n,
                         int highest)
{
    const char *head[7] = {"IMPLEMENTATION", "DEVICES", "PRIORITY",
                           "MODULE", "VERSION", "ABI", "FILE"};
    cli_table_t *t = cli_table_new(7);
    int32_t i, j;

    qsort(v, (size_t)n, sizeof(*v), by_priority);
    fprintf(f, "\nVersion %d", (int)v[0].version);
    if (v[0].ns && v[0].ns[0])
        fprintf(f, " in namespace %s", v[0].ns);
    fprintf(f, "%s\n  Role:\n", highest ? " (the default version)" : "");
    for (j = 1; j < n && v[j].role == v[0].role; j++)
        ;
    for (i = 0; i < (j == n ? 1 : n); i++) {
        char text[320];
        if (j == n)
            snprintf(text, sizeof(text), "%s: %s", cli_role_name(v[i].role),
                     role_text(v[i].role));
        else
            snprintf(text, sizeof(text), "%s (implementation %s): %s",
                     cli_role_name(v[i].role), v[i].implementation,
                     role_text(v[i].role));
        wrapped(f, 4, 0, "", text);
    }
    if (!t || cli_table_add(t, head)) {
        cli_table_free(t);
        return cli_error("out of memory");
    }
    for (i = 0; i < n; i++) {
        char prio[16], abi[16];
        const char *row[7];
        snprintf(prio, sizeof(prio), "%d", (int)v[i].priority);
        snprintf(abi, sizeof(abi), "%u", (unsigned)v[i].abi_version);
        row[0] = v[i].implementation;
        row[1] = cli_device_name(v[i].devices);
        row[2] = prio;
        row[3] = v[i].module_name;
        row[4] = v[i].module_version[0] ? v[i].module_version : "-";
        row[5] = abi;
        row[6] = v[i].module_file;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    fprintf(f, "\n  Implementations (on each device, the first listed is "
               "the default):\n");
    cli_table_print(t, f, "    ");
    cli_table_free(t);

    fprintf(f, "\n  Modules:\n");
    for (i = 0; i < n; i++) {
        char text[1024];
        for (j = 0; j < i && strcmp(v[j].module_file, v[i].module_file); j++)
            ;
        if (j < i)
            continue;
        snprintf(text, sizeof(text), "%s %s%s%s%s: %s", v[i].module_name,
                 v[i].module_version, v[i].module_license[0] ? ", " : "",
                 v[i].module_license,
                 v[i].module_license[0] ? " license" : "",
                 v[i].module_description[0] ? v[i].module_description
                                            : "(no description)");
        wrapped(f, 4, 0, "", text);
        wrapped(f, 6, 0, "", v[i].module_file);
    }

    fprintf(f, "\n  Inputs and outputs:\n");
    wrapped(f, 4, 0, "", "not described by the module ABI, which declares a "
            "layer type by its params alone; the manifest reference "
            "documents those of mica's own layer types:");
    fprintf(f, "      %s/manifest.md\n", MICA_DOC_DIR);

    for (i = 0; i < n; i++) {
        for (j = 0; j < i && !same_fields(v[j].creator, v[i].creator); j++)
            ;
        if (j < i)
            continue;
        for (j = i + 1; j < n && same_fields(v[j].creator, v[i].creator);
             j++)
            ;
        if (j == n && i == 0)
            fprintf(f, "\n  Params:\n");
        else
            fprintf(f, "\n  Params of implementation %s:\n",
                    v[i].implementation);
        print_fields(f, v[i].creator);
    }
    return CLI_OK;
}

int cli_modules_detail(mica_context_t *ctx, const cli_mod_filter_t *flt,
                       FILE *f)
{
    int32_t n = mica_registry_count(ctx), k, nb = 0, i;
    mica_creator_info_t *v = calloc((size_t)n + 1, sizeof(*v));
    char nss[512] = "", vers[256] = "", num[16];
    int rc = CLI_OK;

    if (!v)
        return cli_error("out of memory");
    for (k = 0; k < n; k++)
        if ((v[nb].struct_size = sizeof(v[nb])) != 0 &&
            mica_registry_get(ctx, k, &v[nb]) == MICA_OK
            && cli_mod_match(flt, &v[nb])) {
            add_once(nss, sizeof(nss), ns_label(v[nb].ns));
            snprintf(num, sizeof(num), "%d", (int)v[nb].version);
            add_once(vers, sizeof(vers), num);
            nb++;
        }
    wrapped(f, 0, 11, "Layer type", flt->type);
    wrapped(f, 2, 12, "Namespaces", nss);
    wrapped(f, 2, 12, "Versions", vers);
    /* The registry is sorted by (namespace, type, version,
     * implementation): each (namespace, version) is one run. */
    for (i = 0; i < nb && rc == CLI_OK; i = k) {
        for (k = i + 1; k < nb && v[k].version == v[i].version
                        && !strcmp(v[k].ns ? v[k].ns : "",
                                   v[i].ns ? v[i].ns : "");
             k++)
            ;
        rc = print_version(f, v + i, k - i,
                           k == nb || strcmp(v[k].ns ? v[k].ns : "",
                                             v[i].ns ? v[i].ns : ""));
    }
    free(v);
    if (rc == CLI_OK && (fflush(f) != 0 || ferror(f)))
        return cli_error("cannot write the description: %s",
                         strerror(errno));
    return rc;
}
