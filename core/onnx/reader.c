/*
 * core/onnx/reader.c - an ONNX model file: mapped, decoded by the C code
 * protoc-c generates from onnx.proto, and checked enough that the rest of
 * the importer can trust its structure (a graph, opsets, nodes with op
 * types).  External data files are mapped when a tensor first names one.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYS_MMAN_H
#include <sys/mman.h>
#endif

#include "onnx_int.h"

/* The tags a ModelProto's fields start with (field << 3 | wire type). */
static int model_tag(uint8_t b)
{
    switch (b) {
    case 0x08: case 0x28:                       /* ir_version, model_version */
    case 0x12: case 0x1a: case 0x22: case 0x32: /* strings */
    case 0x3a: case 0x42:                       /* graph, opset_import */
        return 1;
    default:
        return 0;
    }
}

/* A varint at p (at most n bytes); its length, 0 if malformed. */
static size_t varint(const uint8_t *p, size_t n, uint64_t *v)
{
    size_t i;
    *v = 0;
    for (i = 0; i < n && i < 10; i++) {
        *v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80))
            return i + 1;
    }
    return 0;
}

int mica__ox_probe_bytes(const uint8_t *p, size_t n)
{
    uint64_t v;
    size_t k;

    if (n < 2 || !model_tag(p[0]))
        return 0;
    k = varint(p + 1, n - 1, &v);
    if (!k)
        return 0;
    if (p[0] == 0x08 || p[0] == 0x28)          /* a varint: ir_version */
        return p[0] == 0x08 && v >= 1 && v <= 1000;
    /* A length-delimited field: it fits, and a field or the end follows. */
    if (v > n - 1 - k)
        return 0;
    return 1 + k + v == n || model_tag(p[1 + k + v]);
}

/*
 * The nesting of a protobuf message, walked over its wire format before
 * protobuf-c unpacks it: protobuf-c recurses on the C stack once per
 * nested message, so a file whose TypeProtos or subgraphs nest thousands
 * deep overflows the stack inside unpack, before any check of ours.  The
 * walk follows the descriptors (a length-delimited field is a message
 * where the descriptor says so, bytes or a string otherwise), recurses at
 * most MICA__OX_MAX_NEST deep and visits each byte once per enclosing
 * message.  Returns 0, or -1 with the offset of the field too deep in
 * *at.  Bytes that do not parse end the walk (unpack reports them).
 */
static int wire_nest(const ProtobufCMessageDescriptor *d, const uint8_t *p,
                     size_t n, size_t base, int depth, size_t *at)
{
    size_t i = 0, k;
    uint64_t key, len;

    while (i < n) {
        k = varint(p + i, n - i, &key);
        if (!k)
            return 0;
        i += k;
        switch (key & 7) {
        case 0:
            k = varint(p + i, n - i, &len);
            if (!k)
                return 0;
            i += k;
            break;
        case 1:
            if (n - i < 8)
                return 0;
            i += 8;
            break;
        case 5:
            if (n - i < 4)
                return 0;
            i += 4;
            break;
        case 2: {
            const ProtobufCFieldDescriptor *f;
            k = varint(p + i, n - i, &len);
            if (!k || len > n - i - k)
                return 0;
            i += k;
            f = key >> 3 <= UINT32_MAX
                ? protobuf_c_message_descriptor_get_field(d,
                                                          (unsigned)(key >> 3))
                : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (depth + 1 > MICA__OX_MAX_NEST) {
                    *at = base + i;
                    return -1;
                }
                if (wire_nest(f->descriptor, p + i, (size_t)len, base + i,
                              depth + 1, at) != 0)
                    return -1;
            }
            i += (size_t)len;
            break;
        }
        default:                  /* groups: protobuf-c refuses them */
            return 0;
        }
    }
    return 0;
}

mica_status_t mica__ox_nest_check(mica_context_t *ctx, const char *path,
                                  const ProtobufCMessageDescriptor *d,
                                  const uint8_t *p, size_t n)
{
    size_t at = 0;
    if (wire_nest(d, p, n, 0, 1, &at) == 0)
        return MICA_OK;
    return mica__fail(ctx, MICA_ERR_INVALID, "%s: protobuf messages nest "
                      "more than %d deep (at byte %zu): a damaged or crafted "
                      "file", path, MICA__OX_MAX_NEST, at);
}

mica_status_t mica__ox_file_map(mica_context_t *ctx, const char *path,
                                const char *what, mica__ox_file_t *f)
{
    int fd;

    memset(f, 0, sizeof *f);
    /* O_NONBLOCK: a FIFO named here must not block the open. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return mica__fail(ctx, errno == ENOENT ? MICA_ERR_NOT_FOUND
                          : MICA_ERR_IO, "%s: cannot open '%s': %s", what,
                          path, strerror(errno));
    return mica__ox_file_map_fd(ctx, fd, path, what, f);
}

mica_status_t mica__ox_file_map_fd(mica_context_t *ctx, int fd,
                                   const char *path, const char *what,
                                   mica__ox_file_t *f)
{
    struct stat sb;
    mica_status_t st = MICA_OK;

    memset(f, 0, sizeof *f);
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = mica__fail(ctx, MICA_ERR_IO, "%s: '%s' is not a regular file",
                        what, path);
        goto out;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f->path = mica__strdup(path);
    if (!f->path) {
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
        goto out;
    }
    f->size = (size_t)sb.st_size;
    if (!f->size)
        goto out;
#if defined(HAVE_MMAP) && defined(HAVE_SYS_MMAN_H)
    {
        void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            f->base = p;
            f->mapped = 1;
            goto out;
        }
    }
#endif
    {
        uint8_t *buf = malloc(f->size);
        size_t got = 0;
        ssize_t r;
        if (!buf) {
            st = mica__fail(ctx, MICA_ERR_NOMEM, "%s: out of memory reading "
                            "'%s' (%zu bytes)", what, path, f->size);
            goto out;
        }
        while (got < f->size
               && (r = read(fd, buf + got, f->size - got)) > 0)
            got += (size_t)r;
        f->base = buf;
        if (got != f->size)
            st = mica__fail(ctx, MICA_ERR_IO, "%s: cannot read '%s': %s",
                            what, path, strerror(errno));
    }
out:
    close(fd);
    if (st != MICA_OK)
        mica__ox_file_unmap(f);
    return st;
}

void mica__ox_file_unmap(mica__ox_file_t *f)
{
#if defined(HAVE_MMAP) && defined(HAVE_SYS_MMAN_H)
    if (f->mapped)
        munmap((void *)f->base, f->size);
    else
#endif
        free((void *)f->base);
    free(f->path);
    memset(f, 0, sizeof *f);
}

int64_t mica__ox_opset(const mica__ox_model_t *m, const char *domain)
{
    size_t i;
    int def = !domain || !*domain || !strcmp(domain, "ai.onnx");
    for (i = 0; i < m->proto->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->proto->opset_import[i];
        const char *d = o->domain ? o->domain : "";
        int odef = !*d || !strcmp(d, "ai.onnx");
        if ((def && odef) || (!def && !strcmp(d, domain)))
            return o->has_version ? o->version : 0;
    }
    return 0;
}

/* Every name of g made once (static single assignment): a node output
 * given twice, or one that is also an input or initializer of g, is
 * refused (it was imported and renamed "y_1").  In `made`: 0 for an
 * input or initializer, node + 1 for a node's output. */
static mica_status_t check_names(mica__ox_model_t *m,
                                 const Onnx__GraphProto *g)
{
    mica__index_t made = {0};
    mica_status_t st = MICA_OK;
    size_t i, j;

    for (i = 0; i < g->n_input && st == MICA_OK; i++)
        if (mica__index_put(&made, g->input[i]->name, 0) != 0)
            st = mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < g->n_initializer && st == MICA_OK; i++)
        if (mica__index_put(&made, g->initializer[i]->name, 0) != 0)
            st = mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < g->n_node && st == MICA_OK; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (j = 0; j < n->n_output && st == MICA_OK; j++) {
            const char *o = n->output[j];
            int32_t was;
            if (!o || !*o)
                continue;       /* an optional output left out */
            if ((was = mica__index_get(&made, o)) >= 0)
                st = mica__fail(m->ctx, MICA_ERR_INVALID, "%s: node %zu "
                                "(%s '%s') of graph '%s' makes '%s', which "
                                "%s already makes: each name is made once",
                                m->path, i, n->op_type,
                                n->name ? n->name : "",
                                g->name ? g->name : "", o,
                                was > 0 ? "another node" : "the graph's "
                                "inputs or initializers");
            else if (i < INT32_MAX &&
                     mica__index_put(&made, o, (int32_t)i + 1) != 0)
                st = mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
        }
    }
    mica__index_free(&made);
    return st;
}

/* Every node of g (and of its subgraphs) has an op type; names exist. */
static mica_status_t check_graph(mica__ox_model_t *m,
                                 const Onnx__GraphProto *g, int depth)
{
    size_t i, j, k;
    if (depth > 64)
        return mica__fail(m->ctx, MICA_ERR_UNSUPPORTED, "%s: subgraphs "
                          "nest more than 64 deep", m->path);
    for (i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n->op_type || !*n->op_type)
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: node %zu of "
                              "graph '%s' has no op_type (damaged file?)",
                              m->path, i, g->name ? g->name : "");
        for (j = 0; j < n->n_attribute; j++) {
            const Onnx__AttributeProto *a = n->attribute[j];
            if (!a->name)
                return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: node %zu "
                                  "(%s) has an attribute without a name "
                                  "(damaged file?)", m->path, i, n->op_type);
            if (a->g) {
                mica_status_t st = check_graph(m, a->g, depth + 1);
                if (st != MICA_OK)
                    return st;
            }
            for (k = 0; k < a->n_graphs; k++) {
                mica_status_t st = check_graph(m, a->graphs[k], depth + 1);
                if (st != MICA_OK)
                    return st;
            }
        }
    }
    for (i = 0; i < g->n_input; i++)
        if (!g->input[i]->name || !*g->input[i]->name)
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: input %zu of "
                              "graph '%s' has no name", m->path, i,
                              g->name ? g->name : "");
    for (i = 0; i < g->n_output; i++)
        if (!g->output[i]->name || !*g->output[i]->name)
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: output %zu of "
                              "graph '%s' has no name", m->path, i,
                              g->name ? g->name : "");
    for (i = 0; i < g->n_initializer; i++)
        if (!g->initializer[i]->name || !*g->initializer[i]->name)
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: initializer %zu"
                              " of graph '%s' has no name", m->path, i,
                              g->name ? g->name : "");
    return check_names(m, g);
}

mica_status_t mica__ox_model_open(mica_context_t *ctx, const char *path,
                                  mica__ox_model_t **out)
{
    mica__ox_model_t *m;
    const char *slash;
    mica_status_t st;

    *out = NULL;
    m = calloc(1, sizeof *m);
    if (!m)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
    m->ctx = ctx;
    m->path = mica__strdup(path);
    slash = strrchr(path, '/');
    m->dir = slash == path ? mica__strdup("/")
             : slash ? mica__asprintf("%.*s", (int)(slash - path), path)
                     : mica__strdup("");
    if (!m->path || !m->dir) {
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
        goto fail;
    }
    st = mica__ox_file_map(ctx, path, "ONNX model", &m->file);
    if (st != MICA_OK)
        goto fail;
    if (!mica__ox_probe_bytes(m->file.base, m->file.size)) {
        st = mica__fail(ctx, MICA_ERR_INVALID, "%s: not an ONNX model (its "
                        "first bytes are not those of a ModelProto)", path);
        goto fail;
    }
    st = mica__ox_nest_check(ctx, path, &onnx__model_proto__descriptor,
                             m->file.base, m->file.size);
    if (st != MICA_OK)
        goto fail;
    m->proto = onnx__model_proto__unpack(NULL, m->file.size, m->file.base);
    if (!m->proto) {
        st = mica__fail(ctx, MICA_ERR_INVALID, "%s: not a valid ONNX model: "
                        "its protobuf does not decode (damaged or "
                        "truncated file?)", path);
        goto fail;
    }
    if (!m->proto->has_ir_version || !m->proto->graph) {
        st = mica__fail(ctx, MICA_ERR_INVALID, "%s: not an ONNX model: %s",
                        path, m->proto->has_ir_version ? "it has no graph"
                                                       : "no ir_version");
        goto fail;
    }
    if (m->proto->ir_version < 3 || m->proto->n_opset_import == 0) {
        st = mica__fail(ctx, MICA_ERR_UNSUPPORTED, "%s: ONNX IR version "
                        "%lld without opset_import: the importer reads IR "
                        "version 3 and later", path,
                        (long long)m->proto->ir_version);
        goto fail;
    }
    m->opset = mica__ox_opset(m, "");
    if (m->opset < 1) {
        st = mica__fail(ctx, MICA_ERR_UNSUPPORTED, "%s: the model imports "
                        "no opset of the default domain ai.onnx", path);
        goto fail;
    }
    st = check_graph(m, m->proto->graph, 0);
    if (st != MICA_OK)
        goto fail;
    *out = m;
    return MICA_OK;
fail:
    mica__ox_model_close(m);
    return st;
}

void mica__ox_model_close(mica__ox_model_t *m)
{
    int32_t i;
    if (!m)
        return;
    if (m->proto)
        onnx__model_proto__free_unpacked(m->proto, NULL);
    mica__ox_file_unmap(&m->file);
    for (i = 0; i < m->nb_ext; i++)
        mica__ox_file_unmap(&m->ext[i]);
    free(m->ext);
    free(m->path);
    free(m->dir);
    free(m);
}
