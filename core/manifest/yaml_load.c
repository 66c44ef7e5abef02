/*
 * core/manifest/yaml_load.c - reading a manifest's YAML into a document,
 * within limits.
 *
 * libyaml's own loader (yaml_parser_load) recurses once per level of
 * nesting and expands aliases as it meets them: 100,000 nested lists
 * overflow the stack, `&a [1, *a]` is a cycle, and a few nested aliases
 * ("billion laughs") make gigabytes of nodes out of 600 bytes (issue 15).
 * This file builds the same document from the parser's events instead,
 * with an explicit stack and these rules, each broken one refused with
 * one line naming the file, line and column:
 *
 *   - the text is at most MICA__MF_MAX_BYTES (64 MiB), checked before
 *     parsing (a file by its size);
 *   - nodes nest at most MICA__MF_MAX_DEPTH (64) deep; a manifest needs
 *     five or six levels, inline weights one more per dimension;
 *   - aliases (`*name`) are refused: a manifest, like TensorRT's network
 *     definitions, never needs one, and refusing them costs nothing where
 *     expanding them needs a budget and cycle detection.  Anchors
 *     (`&name`) alone are harmless and ignored.
 *
 * Every node keeps the position of its first character (start_mark), as
 * the loader's do, for messages.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manifest_int.h"

/* The parser's error as a status and a message naming file:line:col. */
static mica_status_t parse_error(mica__mf_t *mf, const yaml_parser_t *parser)
{
    const yaml_mark_t *mk = &parser->problem_mark;
    if (parser->error == YAML_MEMORY_ERROR)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    if (parser->error == YAML_READER_ERROR)
        return mica__fail(mf->ctx, MICA_ERR_INVALID, "%s: cannot read: %s",
                          mf->path,
                          parser->problem ? parser->problem : "error");
    return mica__fail(mf->ctx, MICA_ERR_INVALID,
                      "%s:%lu:%lu: YAML syntax error: %s%s%s", mf->path,
                      (unsigned long)mk->line + 1,
                      (unsigned long)mk->column + 1,
                      parser->problem ? parser->problem : "error",
                      parser->context ? " " : "",
                      parser->context ? parser->context : "");
}

/* A failure at an event's position. */
static mica_status_t fail_at(mica__mf_t *mf, const yaml_mark_t *mk,
                             const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return mica__fail(mf->ctx, MICA_ERR_INVALID, "%s:%lu:%lu: %s", mf->path,
                      (unsigned long)mk->line + 1,
                      (unsigned long)mk->column + 1, msg);
}

/* One open collection: its node, and for a map the key awaiting its
 * value (0: none). */
typedef struct frame {
    int id, key;
} frame_t;

typedef struct builder {
    mica__mf_t *mf;
    yaml_document_t *doc;
    frame_t stack[MICA__MF_MAX_DEPTH];
    int depth;
    int nodes;   /* nodes of the document so far */
} builder_t;

/* Hang node `id` (made from `ev`) under the open collection, if any. */
static mica_status_t attach(builder_t *b, int id, const yaml_event_t *ev)
{
    frame_t *top;
    yaml_node_t *n = yaml_document_get_node(b->doc, id);
    int ok = 1;

    n->start_mark = ev->start_mark;
    n->end_mark = ev->end_mark;
    b->nodes++;
    if (b->depth == 0)
        return MICA_OK;   /* the root: the document's first node */
    top = &b->stack[b->depth - 1];
    if (yaml_document_get_node(b->doc, top->id)->type == YAML_SEQUENCE_NODE)
        ok = yaml_document_append_sequence_item(b->doc, top->id, id);
    else if (!top->key)
        top->key = id;
    else {
        ok = yaml_document_append_mapping_pair(b->doc, top->id, top->key,
                                               id);
        top->key = 0;
    }
    return ok ? MICA_OK
              : mica__fail(b->mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                           b->mf->path);
}

/* Add the node of one event of a document's body. */
static mica_status_t node_event(builder_t *b, const yaml_event_t *ev)
{
    mica__mf_t *mf = b->mf;
    int id;

    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return fail_at(mf, &ev->start_mark, "YAML alias '*%s': a manifest "
                       "may not use aliases (write the value out where it "
                       "is used)", (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        id = yaml_document_add_scalar(b->doc, ev->data.scalar.tag,
                                      ev->data.scalar.value,
                                      (int)ev->data.scalar.length,
                                      ev->data.scalar.style);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (b->depth == MICA__MF_MAX_DEPTH)
            return fail_at(mf, &ev->start_mark, "YAML nested deeper than %s "
                           "levels, the most a manifest may have",
                           MICA__MF_MAX_DEPTH_TEXT);
        id = ev->type == YAML_SEQUENCE_START_EVENT
                 ? yaml_document_add_sequence(b->doc,
                                              ev->data.sequence_start.tag,
                                              ev->data.sequence_start.style)
                 : yaml_document_add_mapping(b->doc,
                                             ev->data.mapping_start.tag,
                                             ev->data.mapping_start.style);
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        b->depth--;
        yaml_document_get_node(b->doc, b->stack[b->depth].id)->end_mark =
            ev->end_mark;
        return MICA_OK;
    default:
        return MICA_OK;
    }
    if (!id)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    if (attach(b, id, ev) != MICA_OK)
        return MICA_ERR_NOMEM;
    if (ev->type != YAML_SCALAR_EVENT) {
        b->stack[b->depth].id = id;
        b->stack[b->depth].key = 0;
        b->depth++;
    }
    return MICA_OK;
}

/* Read events to the end of the stream into mf->doc. */
static mica_status_t build(mica__mf_t *mf, yaml_parser_t *parser)
{
    builder_t b;
    yaml_event_t ev;
    mica_status_t st = MICA_OK;
    int docs = 0, done = 0;

    memset(&b, 0, sizeof b);
    b.mf = mf;
    b.doc = &mf->doc;
    if (!yaml_document_initialize(&mf->doc, NULL, NULL, NULL, 1, 1))
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    mf->have_doc = 1;
    while (!done && st == MICA_OK) {
        if (!yaml_parser_parse(parser, &ev))
            return parse_error(mf, parser);
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            docs++;
            break;
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_NO_EVENT:
            break;
        default:
            /* One document per manifest: a second one is a mistake. */
            if (docs > 1)
                st = fail_at(mf, &ev.start_mark, "%sa manifest is one YAML "
                             "document; this is a second one", "");
            else
                st = node_event(&b, &ev);
        }
        yaml_event_delete(&ev);
    }
    return st;
}

mica_status_t mica__mf_parse(mica__mf_t *mf)
{
    FILE *f;
    yaml_parser_t parser;
    struct stat sb;
    mica_status_t st;
    size_t size = mf->text_len;

    f = mf->text ? NULL : fopen(mf->path, "rb");
    if (!f && !mf->text)
        return mica__fail(mf->ctx,
                          errno == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO,
                          "cannot open manifest '%s': %s", mf->path,
                          strerror(errno));
    if (f && mica__is_dir(f)) {
        fclose(f);
        return mica__fail(mf->ctx, MICA_ERR_IO, "cannot open manifest '%s': "
                          "is a directory", mf->path);
    }
    if (f && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode))
        size = (size_t)sb.st_size;
    /* The cap is for text from outside; an imported model's manifest is
     * mica's own (mem_file set), as large as the model is. */
    if (size > MICA__MF_MAX_BYTES && !mf->mem_file) {
        if (f)
            fclose(f);
        return mica__fail(mf->ctx, MICA_ERR_INVALID, "%s: %zu bytes, more "
                          "than the %s a manifest may have", mf->path, size,
                          MICA__MF_MAX_BYTES_TEXT);
    }
    if (!yaml_parser_initialize(&parser)) {
        if (f)
            fclose(f);
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    }
    if (f)
        yaml_parser_set_input_file(&parser, f);
    else
        yaml_parser_set_input_string(&parser,
                                     (const unsigned char *)mf->text,
                                     mf->text_len);
    st = build(mf, &parser);
    yaml_parser_delete(&parser);
    if (f)
        fclose(f);
    return st;
}
