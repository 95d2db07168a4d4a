/* core/eval/eval-record.c - one graded sample: accessors and its journal line */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "limit-names.h"

void core_eval_record_free(sbx_eval_record *r)
{
    if (!r)
        return;
    free(r->task_id);
    free(r->provider);
    free(r->reason);
    free(r->stderr_tail);
    free(r->completion);
    free(r->output);
    free(r->run);
    core_eval_attempts_free(r);
    free(r);
}

char *core_eval_excerpt(const char *data, size_t len, size_t max, bool tail)
{
    size_t off = 0;
    char *s;

    if (!data || len == 0)
        return NULL;
    if (len > max) {
        if (tail)
            off = len - max;
        else
            len = max;
    }
    /* start on a UTF-8 lead byte */
    while (off < len && ((unsigned char)data[off] & 0xC0) == 0x80)
        off++;
    if (!(s = malloc(len - off + 1)))
        return NULL;
    memcpy(s, data + off, len - off);
    s[len - off] = '\0';
    for (size_t i = 0; i < len - off; i++)
        if (s[i] == '\0')
            s[i] = '?';     /* JSON strings here hold no NULs */
    core_eval_utf8_sanitize(s);
    return s;
}

int core_eval_note_ungraded(sbx_eval_record *rec, sbx_eval_verdict v, const char *provider,
                            const char *msg)
{
    free(rec->provider);
    free(rec->reason);
    rec->verdict = v;
    /* no_template: nothing ran, so no run status */
    rec->status = v == SBX_VERDICT_SANDBOX_ERROR ? sbx_run_status_name(SBX_RUN_SANDBOX_ERROR)
                                                 : NULL;
    rec->exit_code = -1;
    rec->provider = strdup(provider ? provider : "");
    rec->reason = strdup(msg && *msg ? msg : sbx_eval_verdict_name(v));
    if (!rec->provider || !rec->reason)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    core_eval_utf8_sanitize(rec->reason);
    core_eval_utf8_sanitize(rec->provider);
    return SBX_OK;
}

void core_eval_utf8_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;

    while (*p) {
        size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3
                 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = n > 0;
        uint32_t cp = n == 1 ? *p : n == 2 ? (*p & 0x1Fu) : n == 3 ? (*p & 0x0Fu) : (*p & 0x07u);
        for (size_t i = 1; ok && i < n; i++) {
            ok = (p[i] & 0xC0) == 0x80;
            cp = (cp << 6) | (p[i] & 0x3Fu);
        }
        /* no overlong forms, surrogates or values past U+10FFFF */
        if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
                   (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
            ok = false;
        if (!ok) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

const char *sbx_eval_record_task_id(const sbx_eval_record *r) { return r ? r->task_id : NULL; }
size_t sbx_eval_record_sample(const sbx_eval_record *r) { return r ? r->sample : 0; }
sbx_eval_verdict sbx_eval_record_verdict(const sbx_eval_record *r)
{
    return r ? r->verdict : SBX_VERDICT_SANDBOX_ERROR;
}
const char *sbx_eval_record_status(const sbx_eval_record *r) { return r ? r->status : NULL; }
const char *sbx_eval_record_provider(const sbx_eval_record *r)
{
    return r && r->provider ? r->provider : "";
}
uint64_t sbx_eval_record_time_ns(const sbx_eval_record *r) { return r ? r->time_ns : 0; }
int64_t sbx_eval_record_cpu_ns(const sbx_eval_record *r) { return r ? r->cpu_ns : -1; }
int64_t sbx_eval_record_peak_memory(const sbx_eval_record *r) { return r ? r->peak_memory : -1; }

void core_eval_record_usage(sbx_eval_record *rec, const sbx_result *r, bool add)
{
    int64_t cpu = sbx_result_cpu_ns(r), peak = sbx_result_peak_memory(r);

    if (!add) {
        rec->cpu_ns = cpu;
        rec->peak_memory = peak;
        return;
    }
    /* the runs of one sample (a judged one's tests): CPU adds up, the
     * peak is the largest; one run not measured leaves the sum unknown */
    rec->cpu_ns = rec->cpu_ns >= 0 && cpu >= 0 ? rec->cpu_ns + cpu : -1;
    if (peak > rec->peak_memory)
        rec->peak_memory = peak;
}
unsigned sbx_eval_record_attempts(const sbx_eval_record *r) { return r ? r->attempts : 0; }
const char *sbx_eval_record_reason(const sbx_eval_record *r) { return r ? r->reason : NULL; }
const char *sbx_eval_record_completion(const sbx_eval_record *r)
{
    return r && r->completion ? r->completion : "";
}
const char *sbx_eval_record_output(const sbx_eval_record *r) { return r ? r->output : NULL; }

void sbx_eval_record_tests(const sbx_eval_record *r, size_t *passed, size_t *total)
{
    if (passed)
        *passed = r ? r->tests_passed : 0;
    if (total)
        *total = r ? r->tests_total : 0;
}

bool sbx_eval_record_base_verdict(const sbx_eval_record *r, sbx_eval_verdict *v)
{
    if (!r || !r->has_base)
        return false;
    if (v)
        *v = r->base_verdict;
    return true;
}

uint64_t sbx_eval_record_unenforced_limits(const sbx_eval_record *r)
{
    return r ? r->unenforced : 0;
}

static json_t *record_json(const sbx_eval_record *r)
{
    json_t *o = json_object();
    int bad = 0;

    if (!o)
        return NULL;
    bad |= json_object_set_new(o, "task_id", json_string(r->task_id));
    bad |= json_object_set_new(o, "sample", json_integer((json_int_t)r->sample));
    bad |= json_object_set_new(o, "verdict", json_string(sbx_eval_verdict_name(r->verdict)));
    bad |= json_object_set_new(o, "passed", json_boolean(r->verdict == SBX_VERDICT_PASSED));
    if (r->has_base) {
        bad |= json_object_set_new(o, "base_verdict",
                                   json_string(sbx_eval_verdict_name(r->base_verdict)));
        bad |= json_object_set_new(o, "base_passed",
                                   json_boolean(r->base_verdict == SBX_VERDICT_PASSED));
    }
    bad |= json_object_set_new(o, "status", r->status ? json_string(r->status) : json_null());
    bad |= json_object_set_new(o, "exit_code", r->exit_code >= 0 ? json_integer(r->exit_code)
                                                                  : json_null());
    bad |= json_object_set_new(o, "signal", r->signal > 0 ? json_integer(r->signal)
                                                           : json_null());
    bad |= json_object_set_new(o, "time_ns", json_integer((json_int_t)r->time_ns));
    bad |= json_object_set_new(o, "cpu_ns", r->cpu_ns >= 0 ? json_integer(r->cpu_ns)
                                                           : json_null());
    bad |= json_object_set_new(o, "peak_memory_bytes",
                               r->peak_memory >= 0 ? json_integer(r->peak_memory) : json_null());
    bad |= json_object_set_new(o, "provider", json_string(r->provider ? r->provider : ""));
    bad |= json_object_set_new(o, "attempts", json_integer(r->attempts));
    bad |= json_object_set_new(o, "attempts_time_ns", r->attempts_ns
                               ? json_integer((json_int_t)r->attempts_ns) : json_null());
    if (r->n_tries)
        bad |= json_object_set_new(o, "attempt_log", core_eval_attempts_json(r));
    bad |= json_object_set_new(o, "reason", r->reason ? json_string(r->reason) : json_null());
    if (r->stderr_tail)
        bad |= json_object_set_new(o, "stderr_tail", json_string(r->stderr_tail));
    bad |= json_object_set_new(o, "output", r->output ? json_string(r->output) : json_null());
    bad |= json_object_set_new(o, "completion", json_string(r->completion ? r->completion
                                                                           : ""));
    if (r->tests_total) {
        bad |= json_object_set_new(o, "tests_passed", json_integer((json_int_t)r->tests_passed));
        bad |= json_object_set_new(o, "tests_total", json_integer((json_int_t)r->tests_total));
    }
    if (r->unenforced)
        bad |= json_object_set_new(o, "unenforced_limits", core_limit_names_json(r->unenforced));
    if (r->run)
        bad |= json_object_set_new(o, "run", json_loads(r->run, 0, NULL));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *sbx_eval_record_to_json(const sbx_eval_record *r)
{
    json_t *o;
    char *s;

    if (!r || !(o = record_json(r)))
        return NULL;
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static const char *status_static(const char *name)
{
    for (int i = 0; i < SBX_RUN_STATUS_COUNT; i++) {
        const char *n = sbx_run_status_name((sbx_run_status)i);
        if (n && !strcmp(n, name))
            return n;
    }
    return "unknown";
}

int core_eval_record_from_json(json_t *o, sbx_eval_record **out, const char **why)
{
    json_t *v;
    sbx_eval_record *r;
    int verdict = -1;

    *out = NULL;
    *why = NULL;
    if (!json_is_string(json_object_get(o, "task_id")))
        *why = "no \"task_id\" string";
    else if (!json_is_integer(v = json_object_get(o, "sample")) || json_integer_value(v) < 0)
        *why = "no \"sample\" index";
    else if (!json_is_string(v = json_object_get(o, "verdict")) ||
             (verdict = core_eval_verdict_from_name(json_string_value(v))) < 0)
        *why = "no known \"verdict\"";
    if (*why)
        return SBX_E_INVAL;
    if (!(r = calloc(1, sizeof *r)))
        return SBX_E_NOMEM;
    r->task_id = strdup(json_string_value(json_object_get(o, "task_id")));
    r->sample = (size_t)json_integer_value(json_object_get(o, "sample"));
    r->verdict = (sbx_eval_verdict)verdict;
    v = json_object_get(o, "base_verdict");
    if (json_is_string(v) && core_eval_verdict_from_name(json_string_value(v)) >= 0 &&
        sbx_eval_verdict_graded((sbx_eval_verdict)verdict)) {
        r->has_base = true;
        r->base_verdict = (sbx_eval_verdict)core_eval_verdict_from_name(json_string_value(v));
    }
    v = json_object_get(o, "status");
    r->status = json_is_null(v) && verdict == SBX_VERDICT_NO_TEMPLATE
                    ? NULL : status_static(json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(o, "exit_code");
    r->exit_code = json_is_integer(v) ? (int)json_integer_value(v) : -1;
    v = json_object_get(o, "signal");
    r->signal = json_is_integer(v) ? (int)json_integer_value(v) : 0;
    v = json_object_get(o, "time_ns");
    r->time_ns = json_is_integer(v) && json_integer_value(v) > 0
                     ? (uint64_t)json_integer_value(v) : 0;
    v = json_object_get(o, "cpu_ns");
    r->cpu_ns = json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
    v = json_object_get(o, "peak_memory_bytes");
    r->peak_memory = json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v)
                                                                      : -1;
    v = json_object_get(o, "attempts");
    r->attempts = json_is_integer(v) ? (unsigned)json_integer_value(v) : 1;
    v = json_object_get(o, "attempts_time_ns");
    r->attempts_ns = json_is_integer(v) && json_integer_value(v) > 0
                         ? (uint64_t)json_integer_value(v) : 0;
    v = json_object_get(o, "provider");
    r->provider = strdup(json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(o, "reason");
    if (json_is_string(v))
        r->reason = strdup(json_string_value(v));
    v = json_object_get(o, "stderr_tail");
    if (json_is_string(v))
        r->stderr_tail = strdup(json_string_value(v));
    v = json_object_get(o, "output");
    if (json_is_string(v))
        r->output = strdup(json_string_value(v));
    v = json_object_get(o, "completion");
    if (json_is_string(v))
        r->completion = strdup(json_string_value(v));
    /* kept as it came, so that a resumed record is written back alike */
    if (json_is_object(v = json_object_get(o, "run")))
        r->run = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    v = json_object_get(o, "tests_total");
    if (json_is_integer(v) && json_integer_value(v) > 0 &&
        json_is_integer(json_object_get(o, "tests_passed")) &&
        json_integer_value(json_object_get(o, "tests_passed")) >= 0 &&
        json_integer_value(json_object_get(o, "tests_passed")) <= json_integer_value(v)) {
        r->tests_total = (size_t)json_integer_value(v);
        r->tests_passed = (size_t)json_integer_value(json_object_get(o, "tests_passed"));
    }
    v = json_object_get(o, "unenforced_limits");
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
        for (int l = 0; l < 64; l++)
            if (json_is_string(json_array_get(v, i)) && sbx_unenforced_name(l) &&
                !strcmp(json_string_value(json_array_get(v, i)), sbx_unenforced_name(l)))
                r->unenforced |= UINT64_C(1) << l;
    r->resumed = true;
    if (core_eval_attempts_from_json(r, json_object_get(o, "attempt_log")) != SBX_OK ||
        !r->task_id || !r->provider || (json_is_string(json_object_get(o, "reason")) &&
                                        !r->reason)) {
        core_eval_record_free(r);
        return SBX_E_NOMEM;
    }
    *out = r;
    return SBX_OK;
}
