/*
 * tests/test_triton_config.c - the Triton backend's configuration code
 * without a server: the JSON tree (tools/triton/json.c) and the check and
 * completion of a model configuration's inputs, outputs and
 * max_batch_size against a mica engine (tools/triton/config_io.c), with
 * the exact messages a user sees.  tests/triton/fake_triton.c stands in
 * for the server's error functions.
 */
#include <config.h>

#include "backend.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[512];
static mica_context_t *ctx;
static mica__tb_backend_t backend = {NULL, 4, 0};

/* A runtime batch N (profiles 1..8 and 9..32); outputs [N, 3] and [N]. */
static const char *batching =
    "mica: 1\n"
    "inputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
    "profiles:\n"
    "  - x: {min: [1, 3], opt: [4, 3], max: [8, 3]}\n"
    "  - x: {min: [9, 3], opt: [16, 3], max: [32, 3]}\n"
    "layers:\n"
    "  - {name: relu, type: Activation, inputs: [x], outputs: [y],"
    " params: {type: relu}}\n"
    "  - {name: sum, type: Reduce, inputs: [y], outputs: [s],"
    " params: {op: sum, axes: [1]}}\n"
    "outputs: [y, s]\n";

/* Fixed shapes: no batch dimension. */
static const char *fixed =
    "mica: 1\n"
    "inputs:\n  x: {dtype: float32, shape: [2, 3]}\n"
    "layers:\n"
    "  - {name: relu, type: Activation, inputs: [x], outputs: [y],"
    " params: {type: relu}}\n"
    "outputs: [y]\n";

/* An engine built from manifest text (NULL after a failure). */
static mica_engine_t *engine_of(const char *text)
{
    char path[600];
    FILE *f;
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;

    snprintf(path, sizeof path, "%s/m.yaml", dir);
    if (!(f = fopen(path, "w")))
        return NULL;
    fputs(text, f);
    fclose(f);
    if (mica_manifest_load(ctx, path, &m) == MICA_OK)
        mica_engine_build(mica_manifest_network(m), NULL, &e);
    if (!e)
        diag("%s", mica_context_error(ctx));
    mica_manifest_destroy(m);
    remove(path);
    return e;
}

/*
 * Run config_io on `config` (JSON) for `engine` and compare: the error
 * message (NULL: success) and, on success, the configuration written back
 * (NULL: unchanged).
 */
static void check(const char *what, mica_engine_t *engine, int complete,
                  const char *config, const char *want_err,
                  const char *want_config, int32_t want_batch)
{
    mica__tb_model_t m;
    mica__json_t *doc;
    TRITONSERVER_Error *err;
    char why[128];
    int changed = -1;

    memset(&m, 0, sizeof m);
    m.name = "m";
    m.backend = &backend;
    if (mica__json_parse(config, strlen(config), &doc, why, sizeof why)) {
        ok(0, "%s: the test's JSON parses (%s)", what, why);
        return;
    }
    err = mica__tb_config_io(&m, engine, doc, complete, &changed);
    if (want_err) {
        is_string(want_err, err ? TRITONSERVER_ErrorMessage(err) : "(none)",
                  "%s: refused", what);
    } else if (err) {
        ok(0, "%s: accepted", what);
        diag("%s", TRITONSERVER_ErrorMessage(err));
    } else {
        size_t len;
        char *text = mica__json_write(doc, &len);
        if (want_config)
            is_string(want_config, changed ? text : "(unchanged)",
                      "%s: completed", what);
        else
            ok(!changed, "%s: accepted unchanged", what);
        is_int(want_batch, m.max_batch, "%s: max_batch_size", what);
        free(text);
    }
    TRITONSERVER_ErrorDelete(err);
    mica__tb_io_free(m.inputs, m.nb_inputs);
    mica__tb_io_free(m.outputs, m.nb_outputs);
    mica__json_free(doc);
}

static void json(void)
{
    static const char *text =
        " {\"a\": [1, -2.5e3, \"8\"], \"b\": {\"c\": true, \"d\": null},"
        " \"e\": \"x\\u00e9\\ud83d\\ude00\\n\\\"\"} ";
    mica__json_t *v, *w;
    char why[128], *out;
    size_t len;
    int64_t k = 0;

    ok(mica__json_parse(text, strlen(text), &v, why, sizeof why) == 0,
       "json: a document parses");
    out = mica__json_write(v, &len);
    is_string("{\"a\":[1,-2.5e3,\"8\"],\"b\":{\"c\":true,\"d\":null},"
              "\"e\":\"x\xc3\xa9\xf0\x9f\x98\x80\\u000a\\\"\"}", out,
              "json: written back compact, escapes decoded to UTF-8");
    free(out);
    ok(mica__json_int(mica__json_get(v, "a")->child->next->next, &k) == 0 &&
           k == 8,
       "json: an integer given as a string reads as 8");
    ok(mica__json_int(mica__json_get(v, "a")->child->next, &k) != 0,
       "json: -2.5e3 is not an integer");
    w = mica__json_new_int(7);
    mica__json_set(v, "b", w);
    mica__json_set(v, "z", mica__json_new_string("new"));
    out = mica__json_write(v, &len);
    contains(out, "\"b\":7,\"e\"", "json: set replaces a member in place");
    contains(out, "\"z\":\"new\"}", "json: set appends a new member");
    free(out);
    mica__json_free(v);

    ok(mica__json_parse("{\"a\" 1}", 8, &v, why, sizeof why) != 0,
       "json: a missing colon is refused");
    is_string("offset 5: expected ':'", why, "json: ... with the offset");
    ok(mica__json_parse("[1, 2", 5, &v, why, sizeof why) != 0,
       "json: an unterminated array is refused");
    is_string("offset 5: expected ',' or ']'", why, "json: ... at the end");
    ok(mica__json_parse("\"\\ud800x\"", 9, &v, why, sizeof why) != 0,
       "json: a lone surrogate is refused");
    ok(mica__json_parse("1 2", 3, &v, why, sizeof why) != 0,
       "json: text after the value is refused");
    is_string("offset 2: text after the value", why, "json: ... so said");
}

static void configs(void)
{
    mica_engine_t *b = engine_of(batching), *f = engine_of(fixed);

    if (!b || !f)
        bail("cannot build the test engines");
    check("empty, auto-complete, max-batch-size 4", b, 1, "{\"max_batch_size\":0}", NULL,
          "{\"max_batch_size\":4,\"dynamic_batching\":{},\"input\":[{\"name\":"
          "\"x\",\"data_type\":\"TYPE_FP32\",\"dims\":[3]}],\"output\":[{"
          "\"name\":\"y\",\"data_type\":\"TYPE_FP32\",\"dims\":[3]},{\"name\":"
          "\"s\",\"data_type\":\"TYPE_FP32\",\"dims\":[]}]}", 4);
    backend.max_batch_cap = 0;
    check("empty, no max-batch-size: the profiles' largest batch", b, 1, "{\"input\":[]}", NULL,
          "{\"input\":[{\"name\":\"x\",\"data_type\":\"TYPE_FP32\",\"dims\":"
          "[3]}],\"max_batch_size\":32,\"dynamic_batching\":{},\"output\":[{"
          "\"name\":\"y\",\"data_type\":\"TYPE_FP32\",\"dims\":[3]},{\"name\":"
          "\"s\",\"data_type\":\"TYPE_FP32\",\"dims\":[]}]}", 32);
    backend.max_batch_cap = 4;
    check("complete, dims as strings", b, 0,
          "{\"max_batch_size\":\"32\",\"input\":[{\"name\":\"x\",\"data_type\":"
          "\"TYPE_FP32\",\"dims\":[\"3\"]}],\"output\":[{\"name\":\"s\","
          "\"data_type\":\"TYPE_FP32\",\"dims\":[]}]}", NULL, NULL, 32);
    check("whole tensors, no batching", b, 1,
          "{\"max_batch_size\":0,\"input\":[{\"name\":\"x\",\"data_type\":"
          "\"TYPE_FP32\",\"dims\":[-1,3]}],\"output\":[{\"name\":\"y\","
          "\"data_type\":\"TYPE_FP32\",\"dims\":[-1,3]},{\"name\":\"s\","
          "\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}]}", NULL, NULL, 0);
    check("fixed shapes, auto-complete", f, 1, "{}", NULL,
          "{\"input\":[{\"name\":\"x\",\"data_type\":\"TYPE_FP32\",\"dims\":"
          "[2,3]}],\"output\":[{\"name\":\"y\",\"data_type\":\"TYPE_FP32\","
          "\"dims\":[2,3]}]}", 0);

    check("batch too large", b, 1, "{\"max_batch_size\":33}",
          "model 'm': max_batch_size is 33 but the engine's profiles admit "
          "batches 1 to 32 only", NULL, 0);
    check("batching a fixed shape", f, 1, "{\"max_batch_size\":2}",
          "model 'm': max_batch_size 2 needs a runtime first dimension (the "
          "batch) on every input and output; input 'x' is [2, 3]", NULL, 0);
    check("a wrong data_type", b, 1,
          "{\"max_batch_size\":8,\"input\":[{\"name\":\"x\",\"data_type\":"
          "\"TYPE_INT32\",\"dims\":[3]}]}",
          "model 'm': input 'x' has data_type TYPE_INT32 but the model's is "
          "TYPE_FP32", NULL, 0);
    check("wrong dims", b, 1,
          "{\"max_batch_size\":8,\"input\":[{\"name\":\"x\",\"data_type\":"
          "\"TYPE_FP32\",\"dims\":[4]}]}",
          "model 'm': input 'x' has dims [4] but the model's are [3] (-1: "
          "any), without the batch dimension", NULL, 0);
    check("an unknown output", b, 1,
          "{\"output\":[{\"name\":\"q\",\"data_type\":\"TYPE_FP32\","
          "\"dims\":[3]}]}",
          "model 'm': config.pbtxt names output 'q', which the model does "
          "not have (its outputs: y, s)", NULL, 0);
    check("a missing input, auto-complete off", f, 0, "{\"input\":[]}",
          "model 'm': config.pbtxt lacks input 'x' (auto-complete is off)",
          NULL, 0);
    check("a runtime dimension made fixed is fine", b, 0,
          "{\"max_batch_size\":0,\"input\":[{\"name\":\"x\",\"data_type\":"
          "\"TYPE_FP32\",\"dims\":[5,3]}]}", NULL, NULL, 0);
    mica_engine_destroy(b);
    mica_engine_destroy(f);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    TRITONSERVER_Error *err;

    snprintf(dir, sizeof dir, "%s/mica-test-triton-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail("cannot make a scratch folder");
    if ((err = mica__tb_context(&backend, &ctx)))
        skip_all("no mica modules: %s", TRITONSERVER_ErrorMessage(err));
    plan_lazy();
    json();
    configs();
    mica_context_destroy(ctx);
    rmdir(dir);
    return exit_status();
}
