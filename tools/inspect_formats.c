/*
 * tools/inspect_formats.c - `mica inspect`'s memory formats: where an
 * engine holds tensors in channels last (NHWC, NDHWC) and where it
 * changes a tensor's format, the reorders the builder inserted (Identity
 * layers "reorder:T@FORMAT", or a float16 cast that reorders as it
 * casts), each with the tensor it reads (and the layer that made it) and
 * the layers that read what it makes.  Nothing is printed for an engine
 * whose tensors are all linear.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *format_name(uint32_t f)
{
    return f == MICA_FORMAT_HWC ? "hwc" : f == MICA_FORMAT_DHWC ? "dhwc"
                                                                : "linear";
}

/* Tensor t's info; 0 if the engine has no such tensor. */
static int tensor(mica_engine_t *engine, int32_t t, mica_tensor_info_t *ti)
{
    memset(ti, 0, sizeof *ti);
    ti->struct_size = sizeof *ti;
    return t >= 0 && mica_engine_tensor(engine, t, ti) == MICA_OK;
}

/* Layer s's info; 0 if the engine has no such layer. */
static int layer(mica_engine_t *engine, int32_t s, mica_layer_info_t *li)
{
    memset(li, 0, sizeof *li);
    li->struct_size = sizeof *li;
    return s >= 0 && mica_engine_layer(engine, s, li) == MICA_OK;
}

/* "t (float16, hwc, made by 'conv')" or "(..., network input)". */
static void describe_input(mica_engine_t *engine,
                           const mica_tensor_info_t *ti, char *buf,
                           size_t len)
{
    mica_layer_info_t li;

    if (ti->producer >= 0 && layer(engine, ti->producer, &li))
        snprintf(buf, len, "%s (%s, %s, made by '%s')", ti->name,
                 mica_dtype_name(ti->dtype), format_name(ti->format),
                 li.name);
    else
        snprintf(buf, len, "%s (%s, %s, network input)", ti->name,
                 mica_dtype_name(ti->dtype), format_name(ti->format));
}

/* "t@linear (float16, linear), read by 'fc', 'x'" (or "network
 * output"). */
static void describe_output(mica_engine_t *engine, int32_t t,
                            const mica_tensor_info_t *ti, char *buf,
                            size_t len)
{
    int32_t s, i, n = mica_engine_nb_layers(engine), readers = 0;
    size_t pos = (size_t)snprintf(buf, len, "%s (%s, %s)", ti->name,
                                  mica_dtype_name(ti->dtype),
                                  format_name(ti->format));
    mica_layer_info_t li;

    for (s = 0; s < n && pos < len; s++) {
        if (!layer(engine, s, &li))
            continue;
        for (i = 0; i < li.nb_inputs && pos < len; i++)
            if (li.inputs[i] == t) {
                pos += (size_t)snprintf(buf + pos, len - pos, "%s'%s'",
                                        readers++ ? ", " : ", read by ",
                                        li.name);
                break;
            }
    }
    if (ti->is_output && pos < len)
        snprintf(buf + pos, len - pos, "%snetwork output",
                 readers ? ", " : ", ");
}

int cli_print_formats(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_tensors(engine), s, t, cl = 0, changes = 0;
    cli_table_t *table;
    mica_tensor_info_t a, b;
    mica_layer_info_t li;
    char from[512], to[1024];
    const char *row[3];

    for (t = 0; t < n; t++)
        cl += tensor(engine, t, &a) && a.format != MICA_FORMAT_LINEAR;
    if (cl == 0)
        return CLI_OK;
    if (!(table = cli_table_new(3)))
        return cli_error("out of memory");
    row[0] = "LAYER";
    row[1] = "READS";
    row[2] = "MAKES";
    if (cli_table_add(table, row)) {
        cli_table_free(table);
        return cli_error("out of memory");
    }
    for (s = 0; s < mica_engine_nb_layers(engine); s++) {
        if (!layer(engine, s, &li) || li.nb_inputs != 1 ||
            li.nb_outputs != 1 || strcmp(li.type, "Identity") != 0 ||
            !tensor(engine, li.inputs[0], &a) ||
            !tensor(engine, li.outputs[0], &b) || a.format == b.format)
            continue;
        describe_input(engine, &a, from, sizeof from);
        describe_output(engine, li.outputs[0], &b, to, sizeof to);
        row[0] = li.name;
        row[1] = from;
        row[2] = to;
        if (cli_table_add(table, row)) {
            cli_table_free(table);
            return cli_error("out of memory");
        }
        changes++;
    }
    printf("\nmemory formats: %d of %d tensors channels last; %d layer%s "
           "change%s a tensor's format (reorders)%s\n", (int)cl, (int)n,
           (int)changes, changes == 1 ? "" : "s", changes == 1 ? "s" : "",
           changes ? ":" : "");
    if (changes)
        cli_table_print(table, stdout, "  ");
    cli_table_free(table);
    return CLI_OK;
}
