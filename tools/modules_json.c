/*
 * tools/modules_json.c - `mica modules --json`: the registry as one JSON
 * document, for programs (editors, the documentation check, a serving
 * layer's health page):
 *
 *   {"mica_version": "0.1.0",
 *    "modules": [{"file", "name", "version", "abi_version", "license",
 *                 "description"}, ...],
 *    "creators": [{"type", "namespace", "version", "implementation",
 *                  "priority", "devices": [...], "role", "module" (the
 *                  file, as in "modules"), "fields": [{"name", "kind",
 *                  "count" (-1: a list of any length), "required",
 *                  "default", "values", "description"}, ...]}, ...],
 *    "load_problems": ["...", ...]}
 *
 * Strings are escaped as JSON requires; a byte that is not part of valid
 * UTF-8 becomes U+FFFD, so the document is always valid.  A default is
 * null when the field has none, else typed as the field (a number, a
 * boolean, a string for enum, dtype and string fields, an array for a
 * list); a float that is not finite is the string "inf", "-inf" or "nan".
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_modules.h"

/* Length of the valid UTF-8 sequence at s, 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned cp;
    size_t n, i;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1fu;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0fu;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07u;
    else
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
        || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

/* s as a JSON string (null for NULL). */
static void json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    while (*p) {
        size_t n = utf8_len(p);
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p, f);
        } else if (*p == '\n') {
            fputs("\\n", f);
        } else if (*p == '\t') {
            fputs("\\t", f);
        } else if (*p == '\r') {
            fputs("\\r", f);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", (unsigned)*p);
        } else if (!n) {
            fputs("\\ufffd", f);
        } else {
            fwrite(p, 1, n, f);
            p += n;
            continue;
        }
        p++;
    }
    fputc('"', f);
}

/* A double as a JSON number, shortest that reads back the same. */
static void json_num(FILE *f, double v)
{
    char buf[40];
    if (isnan(v)) {
        fputs("\"nan\"", f);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
        return;
    }
    snprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof(buf), "%.17g", v);
    fputs(buf, f);
}

/* Element i of a default (or of the enum list), typed. */
static void json_value(FILE *f, const mica_field_schema_t *s, int32_t i)
{
    int64_t v;
    switch (s->type) {
    case MICA_FIELD_FLOAT:
        json_num(f, ((const double *)s->default_value)[i]);
        return;
    case MICA_FIELD_STRING:
        json_str(f, ((const char *const *)s->default_value)[i]);
        return;
    case MICA_FIELD_WEIGHTS:
        fputs("null", f);
        return;
    default:
        break;
    }
    v = ((const int64_t *)s->default_value)[i];
    if (s->type == MICA_FIELD_BOOL)
        fputs(v ? "true" : "false", f);
    else if (s->type == MICA_FIELD_ENUM && s->enum_values)
        json_str(f, s->enum_values[v]);
    else if (s->type == MICA_FIELD_DTYPE)
        json_str(f, mica_dtype_name((mica_dtype_t)v));
    else
        fprintf(f, "%lld", (long long)v);
}

/* One field of a schema as a JSON object. */
static void json_field(FILE *f, const mica_field_schema_t *s)
{
    int32_t i;
    fputs("{\"name\": ", f);
    json_str(f, s->name);
    fputs(", \"kind\": ", f);
    json_str(f, cli_field_kind(s->type));
    fprintf(f, ", \"count\": %d, \"required\": %s, \"default\": ",
            (int)s->count, s->required ? "true" : "false");
    if (!s->default_value || s->nb_default < 0
        || s->type == MICA_FIELD_WEIGHTS) {
        fputs("null", f);
    } else if (s->count == 1 && s->nb_default >= 1) {
        json_value(f, s, 0);
    } else {
        fputc('[', f);
        for (i = 0; i < s->nb_default; i++) {
            fputs(i ? ", " : "", f);
            json_value(f, s, i);
        }
        fputc(']', f);
    }
    fputs(", \"values\": ", f);
    if (s->type == MICA_FIELD_ENUM && s->enum_values) {
        fputc('[', f);
        for (i = 0; s->enum_values[i]; i++) {
            fputs(i ? ", " : "", f);
            json_str(f, s->enum_values[i]);
        }
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    fputs(", \"description\": ", f);
    json_str(f, s->doc);
    fputc('}', f);
}

/* "cpu,cuda" as ["cpu", "cuda"]. */
static void json_devices(FILE *f, uint32_t devices)
{
    const char *s = cli_device_name(devices);
    int first = 1;
    fputc('[', f);
    while (*s && strcmp(s, "-")) {
        size_t n = strcspn(s, ",");
        char name[32];
        snprintf(name, sizeof(name), "%.*s", (int)n, s);
        fputs(first ? "" : ", ", f);
        json_str(f, name);
        first = 0;
        s += n + (s[n] == ',');
    }
    fputc(']', f);
}

/* One creator as a JSON object, its fields as an array of objects. */
static void json_creator(FILE *f, const mica_creator_info_t *c)
{
    int32_t i;
    fputs("    {\"type\": ", f);
    json_str(f, c->type);
    fputs(", \"namespace\": ", f);
    json_str(f, c->ns ? c->ns : "");
    fprintf(f, ", \"version\": %d,\n     \"implementation\": ",
            (int)c->version);
    json_str(f, c->implementation);
    fprintf(f, ", \"priority\": %d, \"devices\": ", (int)c->priority);
    json_devices(f, c->devices);
    fputs(", \"role\": ", f);
    json_str(f, cli_role_name(c->role));
    fputs(",\n     \"module\": ", f);
    json_str(f, c->module_file);
    fputs(",\n     \"fields\": [", f);
    for (i = 0; i < c->creator->nb_fields; i++) {
        fputs(i ? ",\n       " : "\n       ", f);
        json_field(f, &c->creator->fields[i]);
    }
    fputs("]}", f);
}

/* qsort order of the "modules" array: by name, then file. */
static int by_module(const void *pa, const void *pb)
{
    const mica_creator_info_t *a = pa, *b = pb;
    int d = strcmp(a->module_name, b->module_name);
    return d ? d : strcmp(a->module_file, b->module_file);
}

int cli_modules_json(mica_context_t *ctx, const cli_mod_filter_t *flt,
                     FILE *f)
{
    int32_t n = mica_registry_count(ctx), nb = 0, nm = 0, k, i;
    mica_creator_info_t *v = calloc((size_t)n + 1, sizeof(*v));
    mica_creator_info_t *m = calloc((size_t)n + 1, sizeof(*m));

    if (!v || !m) {
        free(v);
        free(m);
        return cli_error("out of memory");
    }
    for (k = 0; k < n; k++) {
        v[nb].struct_size = sizeof(v[nb]);
        if (mica_registry_get(ctx, k, &v[nb]) != MICA_OK
            || !cli_mod_match(flt, &v[nb]))
            continue;
        for (i = 0; i < nm && strcmp(m[i].module_file, v[nb].module_file);
             i++)
            ;
        if (i == nm)
            m[nm++] = v[nb];
        nb++;
    }
    qsort(m, (size_t)nm, sizeof(*m), by_module);

    fputs("{\"mica_version\": ", f);
    json_str(f, mica_version());
    fputs(",\n \"modules\": [", f);
    for (i = 0; i < nm; i++) {
        fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", f);
        json_str(f, m[i].module_file);
        fputs(", \"name\": ", f);
        json_str(f, m[i].module_name);
        fputs(", \"version\": ", f);
        json_str(f, m[i].module_version);
        fprintf(f, ",\n     \"abi_version\": %u, \"license\": ",
                (unsigned)m[i].abi_version);
        json_str(f, m[i].module_license);
        fputs(", \"description\": ", f);
        json_str(f, m[i].module_description);
        fputc('}', f);
    }
    fputs("],\n \"creators\": [", f);
    for (i = 0; i < nb; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_creator(f, &v[i]);
    }
    fputs("],\n \"load_problems\": [", f);
    n = mica_context_nb_load_problems(ctx);
    for (k = 0; k < n; k++) {
        fputs(k ? ",\n    " : "\n    ", f);
        json_str(f, mica_context_load_problem(ctx, k));
    }
    fputs("]}\n", f);
    free(v);
    free(m);
    if (fflush(f) != 0 || ferror(f))
        return cli_error("cannot write the JSON document: %s",
                         strerror(errno));
    return CLI_OK;
}
