/* core/eval/eval-attempt.c - a record's attempts, each with the provider that
 * spent it, so that a sample retried on one provider and graded on the
 * next counts each attempt's time, cost and failure on its own provider
 * (core/eval/eval-usage.c), and its journal line says where it went
 * ("attempt_log"). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

void core_eval_attempts_free(sbx_eval_record *rec)
{
    for (size_t i = 0; i < rec->n_tries; i++) {
        free(rec->tries[i].provider);
        free(rec->tries[i].reason);
    }
    free(rec->tries);
    rec->tries = NULL;
    rec->n_tries = 0;
}

/* Append an attempt (@provider, @reason copied; NULL: none). */
static int push(sbx_eval_record *rec, const char *provider, sbx_eval_verdict v,
                const char *reason, uint64_t ns)
{
    core_eval_attempt *t = realloc(rec->tries, (rec->n_tries + 1) * sizeof *t);

    if (!t)
        return SBX_E_NOMEM;
    rec->tries = t;
    t = &t[rec->n_tries];
    t->provider = strdup(provider ? provider : "");
    t->reason = reason ? strdup(reason) : NULL;
    t->verdict = v;
    t->time_ns = ns;
    if (!t->provider || (reason && !t->reason)) {
        free(t->provider);
        free(t->reason);
        return SBX_E_NOMEM;
    }
    rec->n_tries++;
    return SBX_OK;
}

int core_eval_attempt_add(sbx_eval_record *rec, uint64_t ns)
{
    bool failed = rec->verdict == SBX_VERDICT_SANDBOX_ERROR;
    const char *provider, *message;
    uint64_t st_ns;

    rec->attempts_ns += ns;
    /* the providers its create left behind down the [core] fallback
     * chain: an attempt each, their time taken out of this one's */
    for (size_t i = 0; sbx_fallback_step(i, &provider, &message, &st_ns); i++) {
        uint64_t spent = st_ns < ns ? st_ns : ns;
        if (push(rec, provider, SBX_VERDICT_SANDBOX_ERROR, message, spent) != SBX_OK)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        rec->attempts++;
        ns -= spent;
        /* nor is it the latency of the sandbox that ran the code */
        rec->time_ns -= st_ns < rec->time_ns ? st_ns : rec->time_ns;
    }
    sbx_fallback_reset();
    if (push(rec, rec->provider, rec->verdict, failed ? rec->reason : NULL, ns) != SBX_OK)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

json_t *core_eval_attempts_json(const sbx_eval_record *rec)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < rec->n_tries; i++) {
        const core_eval_attempt *t = &rec->tries[i];
        json_t *o = json_pack("{s:s, s:s, s:o, s:I}", "provider", t->provider,
                              "verdict", sbx_eval_verdict_name(t->verdict),
                              "reason", t->reason ? json_string(t->reason) : json_null(),
                              "time_ns", (json_int_t)t->time_ns);
        if (json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int core_eval_attempts_from_json(sbx_eval_record *rec, const json_t *arr)
{
    for (size_t i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i);
        const json_t *p = json_object_get(o, "provider"), *v = json_object_get(o, "verdict");
        const json_t *why = json_object_get(o, "reason"), *ns = json_object_get(o, "time_ns");
        int verdict = json_is_string(v) ? core_eval_verdict_from_name(json_string_value(v)) : -1;
        /* an entry this version cannot read is left out, not guessed */
        if (!json_is_string(p) || verdict < 0 || !json_is_integer(ns) ||
            json_integer_value(ns) < 0)
            continue;
        if (push(rec, json_string_value(p), (sbx_eval_verdict)verdict,
                 json_is_string(why) ? json_string_value(why) : NULL,
                 (uint64_t)json_integer_value(ns)) != SBX_OK)
            return SBX_E_NOMEM;
    }
    return SBX_OK;
}

bool sbx_eval_record_attempt(const sbx_eval_record *r, size_t i, const char **provider,
                             sbx_eval_verdict *verdict, uint64_t *time_ns)
{
    if (!r || i >= r->n_tries)
        return false;
    if (provider)
        *provider = r->tries[i].provider;
    if (verdict)
        *verdict = r->tries[i].verdict;
    if (time_ns)
        *time_ns = r->tries[i].time_ns;
    return true;
}
