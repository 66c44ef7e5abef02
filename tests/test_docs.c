/*
 * tests/test_docs.c - the manifest reference stays complete: for every
 * layer type the registry holds (under `make check`, the in-tree modules
 * of modules/.libs), docs/manifest.md has a `### Type` section in its
 * "## Layer types" part that follows the section template:
 *
 *   - lines starting with **Inputs**, **Outputs**, **Params** and
 *     **Implementations**;
 *   - a params table row starting with "| `name` |" for every field of
 *     the type's schema (of every version and implementation);
 *   - every registered implementation name, as `name`, on the
 *     **Implementations** line;
 *
 * and the sections are in byte order of their names.  A new module that
 * is not documented, or a new field, fails here, naming what is missing.
 * So does a graph pass (mica_pass_name) without its "## `name`" section
 * in docs/passes.md (beside manifest.md).
 *
 * Run it alone with `make check-docs`, or as
 * `tests/test_docs [PATH/manifest.md]` with $MICA_MODULE_DIR set.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/mica.h"
#include "tap.h"

/* The whole file, NUL-terminated; NULL if it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0
        && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* The line of text that starts with `prefix`, from `from` up to `end`
 * (exclusive); NULL if none. */
static const char *line_starting(const char *from, const char *end,
                                 const char *prefix)
{
    size_t n = strlen(prefix);
    const char *p = from;
    while (p && p < end) {
        if ((p == from || p[-1] == '\n') && !strncmp(p, prefix, n)
            && p + n <= end)
            return p;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

/* The layer-types part: from "## Layer types" to the next "## ". */
static int types_part(const char *doc, const char **start, const char **end)
{
    const char *p = line_starting(doc, doc + strlen(doc), "## Layer types");
    if (!p)
        return 0;
    *start = p;
    p = strchr(p, '\n');
    *end = p ? line_starting(p + 1, doc + strlen(doc), "## ") : NULL;
    if (!*end)
        *end = doc + strlen(doc);
    return 1;
}

/* The section `### type` within [start, end): its body in *s, *e. */
static int section(const char *start, const char *end, const char *type,
                   const char **s, const char **e)
{
    char head[256];
    const char *p;
    snprintf(head, sizeof(head), "### %s\n", type);
    p = line_starting(start, end, head);
    if (!p)
        return 0;
    *s = p + strlen(head);
    *e = line_starting(*s, end, "### ");
    if (!*e)
        *e = end;
    return 1;
}

/* Whether `needle` occurs in [s, e). */
static int within(const char *s, const char *e, const char *needle)
{
    size_t n = strlen(needle);
    for (; s + n <= e; s++)
        if (!strncmp(s, needle, n))
            return 1;
    return 0;
}

/* Check the section of `type` against every creator of it; one TAP line. */
static void check_type(mica_context_t *ctx, const char *start,
                       const char *end, const char *type)
{
    static const char *const parts[] = {"**Inputs**", "**Outputs**",
                                        "**Params**", "**Implementations**"};
    const char *s, *e, *impl_line, *eol;
    int32_t n = mica_registry_count(ctx), k, i;
    int bad = 0;
    char want[320];

    if (!section(start, end, type, &s, &e)) {
        ok(0, "%s: documented", type);
        diag("no '### %s' heading under '## Layer types'", type);
        return;
    }
    for (i = 0; i < 4; i++)
        if (!line_starting(s, e, parts[i])) {
            diag("%s: no line starting with %s", type, parts[i]);
            bad = 1;
        }
    impl_line = line_starting(s, e, "**Implementations**");
    eol = impl_line ? strchr(impl_line, '\n') : NULL;
    if (impl_line && !eol)
        eol = e;
    for (k = 0; k < n; k++) {
        mica_creator_info_t c = {.struct_size = sizeof(mica_creator_info_t)};
        const mica_layer_creator_t *cr;
        if (mica_registry_get(ctx, k, &c) != MICA_OK || strcmp(c.type, type))
            continue;
        cr = c.creator;
        for (i = 0; i < cr->nb_fields; i++) {
            snprintf(want, sizeof(want), "| `%s` |", cr->fields[i].name);
            if (!line_starting(s, e, want)) {
                diag("%s: param '%s' has no params table row starting "
                     "with \"%s\"", type, cr->fields[i].name, want);
                bad = 1;
            }
        }
        snprintf(want, sizeof(want), "`%s`", c.implementation);
        if (impl_line && !within(impl_line, eol, want)) {
            diag("%s: implementation '%s' is not on the **Implementations** "
                 "line", type, c.implementation);
            bad = 1;
        }
    }
    ok(!bad, "%s: documented (template parts, every param, every "
       "implementation)", type);
}

/* The headings of the types part are in byte order. */
static void check_order(const char *start, const char *end)
{
    const char *p = start, *prev = NULL;
    size_t prev_len = 0;
    int sorted = 1;
    while ((p = line_starting(p, end, "### "))) {
        const char *name = p + 4;
        size_t len = strcspn(name, "\n");
        if (prev) {
            size_t m = len < prev_len ? len : prev_len;
            int d = strncmp(prev, name, m);
            if (d > 0 || (d == 0 && prev_len >= len)) {
                diag("'### %.*s' comes after '### %.*s'", (int)len, name,
                     (int)prev_len, prev);
                sorted = 0;
            }
        }
        prev = name;
        prev_len = len;
        p = name + len;
    }
    ok(sorted, "the layer type sections are in alphabetical order");
}

/* Every graph pass has its section in passes.md, beside manifest.md at
 * `path`. */
static void check_passes(const char *path)
{
    char file[4200], head[256];
    const char *slash = strrchr(path, '/');
    char *doc;
    int32_t i;

    if (slash)
        snprintf(file, sizeof(file), "%.*s/passes.md",
                 (int)(slash - path), path);
    else
        snprintf(file, sizeof(file), "passes.md");
    doc = slurp(file);
    for (i = 0; mica_pass_name(i); i++) {
        snprintf(head, sizeof(head), "\n## `%s`", mica_pass_name(i));
        ok(doc && strstr(doc, head), "pass %s: its section in %s",
           mica_pass_name(i), file);
    }
    free(doc);
}

int main(int argc, char **argv)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    char path[4096];
    const char *start, *end;
    mica_context_t *ctx = NULL;
    char *doc;
    int32_t n, k, i, nb_types = 0;
    const char **types;

    if (argc > 1)
        snprintf(path, sizeof(path), "%s", argv[1]);
    else if (top)
        snprintf(path, sizeof(path), "%s/docs/manifest.md", top);
    else
        skip_all("MICA_TOP_SRCDIR is not set and no manifest.md was given");
    doc = slurp(path);
    if (!doc)
        bail("cannot read %s", path);
    if (!types_part(doc, &start, &end))
        bail("%s has no '## Layer types' heading", path);
    if (mica_context_create(&ctx) != MICA_OK
        || mica_context_load_default_modules(ctx) != MICA_OK)
        bail("cannot load the modules");
    n = mica_registry_count(ctx);
    types = calloc((size_t)n + 1, sizeof(*types));
    if (!types)
        bail("out of memory");
    for (k = 0; k < n; k++) {
        mica_creator_info_t c = {.struct_size = sizeof(mica_creator_info_t)};
        if (mica_registry_get(ctx, k, &c) != MICA_OK)
            continue;
        for (i = 0; i < nb_types && strcmp(types[i], c.type); i++)
            ;
        if (i == nb_types)
            types[nb_types++] = c.type;
    }
    if (!nb_types)
        skip_all("no module is loaded (set MICA_MODULE_DIR)");
    for (k = 0; mica_pass_name(k); k++)
        ;
    plan(nb_types + 1 + k);
    for (i = 0; i < nb_types; i++)
        check_type(ctx, start, end, types[i]);
    check_order(start, end);
    check_passes(path);
    free(types);
    free(doc);
    mica_context_destroy(ctx);
    return exit_status();
}
