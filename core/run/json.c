/* core/run/json.c - a result as one JSON object */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "result-int.h"
#include "limit-names.h"

/* Set "<name>" and "<name>_encoding": UTF-8 text as is (NULs included),
 * anything else as base64. */
static int set_bytes(json_t *o, const char *name, const core_buf *b)
{
    char key[64];
    const char *data = b->data ? (const char *)b->data : "";
    json_t *s = json_stringn(data, b->len);   /* NULL unless valid UTF-8 */
    const char *enc = "utf-8";

    if (!s) {
        size_t n = sodium_base64_encoded_len(b->len, sodium_base64_VARIANT_ORIGINAL);
        char *b64 = malloc(n);
        if (!b64)
            return -1;
        sodium_bin2base64(b64, n, b->data, b->len, sodium_base64_VARIANT_ORIGINAL);
        s = json_string(b64);
        free(b64);
        enc = "base64";
    }
    snprintf(key, sizeof key, "%s_encoding", name);
    if (!s || json_object_set_new(o, name, s) || json_object_set_new(o, key, json_string(enc)))
        return -1;
    return 0;
}

static json_t *int_or_null(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

/* Why limits went unenforced (a provider's text: null should it not be
 * UTF-8), or null. */
static json_t *reason(const sbx_result *r)
{
    json_t *s = r->unenforced && r->unenforced_why ? json_string(r->unenforced_why) : NULL;

    return s ? s : json_null();
}

/* The compile step: null when none ran, else its status, time and
 * output; NULL on ENOMEM. */
static json_t *compile_json(const sbx_result *r)
{
    json_t *c;

    if (!r->compiled)
        return json_null();
    c = json_pack("{s:s, s:I}", "status", sbx_run_status_name(r->compile_status),
                  "time_ns", (json_int_t)r->compile_ns);
    if (c && (set_bytes(c, "stdout", &r->compile_out) || set_bytes(c, "stderr", &r->compile_err))) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* "artifacts" (kept, with base64) and "artifacts_left_out" (with why). */
static int set_artifacts(json_t *o, const sbx_result *r)
{
    json_t *kept = json_array(), *out = json_array();
    int rc = !kept || !out ? -1 : 0;

    for (size_t i = 0; rc == 0 && i < r->n_artifacts; i++) {
        const core_artifact *a = &r->artifacts[i];
        json_t *e;
        if (a->why) {
            e = json_pack("{s:s, s:I, s:s}", "path", a->path, "size", (json_int_t)a->size,
                          "reason", a->why);
            rc = !e || json_array_append_new(out, e) ? -1 : 0;
            continue;
        }
        size_t n = sodium_base64_encoded_len(a->size, sodium_base64_VARIANT_ORIGINAL);
        char *b64 = malloc(n);
        if (!b64) {
            rc = -1;
            break;
        }
        sodium_bin2base64(b64, n, a->data ? a->data : (const unsigned char *)"", a->size,
                          sodium_base64_VARIANT_ORIGINAL);
        e = json_pack("{s:s, s:I, s:s, s:s}", "path", a->path, "size", (json_int_t)a->size,
                      "mime", a->mime, "base64", b64);
        free(b64);
        rc = !e || json_array_append_new(kept, e) ? -1 : 0;
    }
    if (rc == 0 && !json_object_set(o, "artifacts", kept) &&
        !json_object_set(o, "artifacts_left_out", out))
        rc = 0;
    else
        rc = -1;
    json_decref(kept);
    json_decref(out);
    return rc;
}

char *sbx_result_to_json(const sbx_result *r)
{
    json_t *o, *t, *c = NULL;
    char *text = NULL;

    if (!r)
        return NULL;
    o = json_object();
    t = json_pack("{s:I, s:I, s:I, s:I, s:I}",
                  "create", (json_int_t)r->timing[SBX_TIMING_CREATE],
                  "start", (json_int_t)r->timing[SBX_TIMING_START],
                  "compile", (json_int_t)r->timing[SBX_TIMING_COMPILE],
                  "exec", (json_int_t)r->timing[SBX_TIMING_EXEC],
                  "total", (json_int_t)r->timing[SBX_TIMING_TOTAL]);
    if (!o || !t || !(c = compile_json(r)))
        goto out;
    if (json_object_set_new(o, "status", json_string(sbx_run_status_name(r->status))) ||
        json_object_set_new(o, "exit_code", r->exit_code < 0 ? json_null()
                                                               : json_integer(r->exit_code)) ||
        json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null()) ||
        set_bytes(o, "stdout", &r->out) ||
        json_object_set_new(o, "stdout_truncated", json_boolean(r->out_truncated)) ||
        set_bytes(o, "stderr", &r->err) ||
        json_object_set_new(o, "stderr_truncated", json_boolean(r->err_truncated)) ||
        json_object_set(o, "timings_ns", t) ||
        json_object_set_new(o, "cpu_ns", int_or_null(r->cpu_ns)) ||
        json_object_set_new(o, "peak_memory_bytes", int_or_null(r->peak_memory)) ||
        json_object_set_new(o, "provider", json_string(r->provider)) ||
        json_object_set_new(o, "sandbox_id", json_string(r->sandbox_id)) ||
        json_object_set_new(o, "pool", r->pool ? json_string(r->pool) : json_null()) ||
        json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null()) ||
        json_object_set_new(o, "error_code", json_integer(r->error_code)) ||
        json_object_set_new(o, "unenforced_limits", core_limit_names_json(r->unenforced)) ||
        json_object_set_new(o, "unenforced_reason", reason(r)) ||
        json_object_set(o, "compile", c) || set_artifacts(o, r))
        goto out;
    text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
out:
    json_decref(c);
    json_decref(t);
    json_decref(o);
    return text;
}
