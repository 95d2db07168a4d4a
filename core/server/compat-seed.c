/* core/server/compat-seed.c - the first sketch's routes: /run_single,
 * /run_batch, /run_agent
 *
 * PolySandbox was first sketched as a FastAPI app with these three
 * routes; their shapes were never published, so they are ours (see
 * doc/polysandboxd.8, FIRST SKETCH), built from /v1's pieces: a run body
 * is /v1/run's, a result is the object `polysandbox run --json` prints,
 * an error is {"error": {code, message, provider}}.
 *
 *   POST /run_single  /v1/run's body, "backend" naming the provider
 *   POST /run_batch   {"backends": [...], "runs": [run, ...]} (or one run's
 *                     fields inline): every run on every backend, the
 *                     backends side by side (a thread each), with each
 *                     backend's timings and whether the backends agree on
 *                     each run's status and output
 *   POST /run_agent   create fields, {"steps": [{"exec": {...}} |
 *                     {"write": {path, content | content_base64, mode}} |
 *                     {"read": {path}}], "keep", "ttl", "stop_on_error"}:
 *                     the steps in order in one sandbox (files and state
 *                     carried), per-step results; destroyed at the end, or
 *                     kept (persistent, with a time-to-live) and then
 *                     reachable under /v1/sandboxes/{id}
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

enum { MAX_BACKENDS = 8, MAX_BATCH = 1024, MAX_STEPS = 256 };

/* "backend" is the sketch's word for a provider. */
static int backend_to_provider(srv_req *r, json_t *j)
{
    json_t *b = json_object_get(j, "backend");

    if (!b)
        return 0;
    if (json_object_get(j, "provider")) {
        srv_error(r, 400, "invalid", NULL, "give backend or provider, not both");
        return -1;
    }
    if (!json_is_string(b)) {
        srv_error(r, 400, "invalid", NULL, "field 'backend' must be a provider name");
        return -1;
    }
    json_object_set(j, "provider", b);
    json_object_del(j, "backend");
    return 0;
}

static void run_single(srv_req *r)
{
    json_t *j = srv_req_json(r);

    if (!j || backend_to_provider(r, j) != 0)
        return;
    srv_run(r);
}

/* ---- /run_batch ----------------------------------------------------------------- */

struct cell {
    srv_opts o;
    bool parsed;
    int rc;
    sbx_result *res;
    json_t *error;            /* the library's refusal, as an error object */
    uint64_t ns;
};

struct lane {
    srv_req *r;
    const char *backend;
    struct cell *cells;       /* [n_runs] */
    size_t n_runs;
    pthread_t thread;
    bool started;
};

static void *lane_run(void *arg)
{
    struct lane *l = arg;

    for (size_t i = 0; i < l->n_runs && !sbx_cancel_fired(l->r->cancel); i++) {
        struct cell *c = &l->cells[i];
        uint64_t t0 = srv_now_ns();
        c->rc = sbx_run(l->r->s->ctx, c->o.create, c->o.exec, &c->res);
        c->ns = srv_now_ns() - t0;
        if (c->rc != SBX_OK) {
            const sbx_error *e = sbx_ctx_last_error(l->r->s->ctx);
            const char *code;
            srv_status_of(c->rc, 422, &code);
            c->error = srv_error_json(code, l->backend, sbx_error_message(e));
        } else {
            srv_metrics_run(l->r->s, l->backend, c->o.language ? c->o.language
                            : c->o.template_name, sbx_run_status_name(sbx_result_status(c->res)),
                            c->ns);
        }
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* {runs, completed, statuses{}, total_ms, mean_ms, median_ms, p95_ms, max_ms} */
static json_t *lane_summary(const struct lane *l)
{
    uint64_t *t = calloc(l->n_runs ? l->n_runs : 1, sizeof *t), sum = 0;
    size_t n = 0;
    json_t *st = json_object(), *o;

    for (size_t i = 0; t && i < l->n_runs; i++) {
        const struct cell *c = &l->cells[i];
        const char *name = c->res ? sbx_run_status_name(sbx_result_status(c->res))
                         : c->error ? "refused" : "not_run";
        json_object_set_new(st, name, json_integer(json_integer_value(json_object_get(st, name))
                                                   + 1));
        if (c->res) {
            t[n++] = c->ns;
            sum += c->ns;
        }
    }
    if (t)
        qsort(t, n, sizeof *t, cmp_u64);
    o = json_pack("{s:I, s:I, s:o, s:f, s:o, s:o, s:o, s:o}", "runs", (json_int_t)l->n_runs,
                  "completed", (json_int_t)n, "statuses", st, "total_ms", (double)sum / 1e6,
                  "mean_ms", n ? json_real((double)sum / 1e6 / (double)n) : json_null(),
                  "median_ms", n ? json_real((double)t[(n - 1) / 2] / 1e6) : json_null(),
                  "p95_ms", n ? json_real((double)t[(n * 95 + 99) / 100 - 1] / 1e6) : json_null(),
                  "max_ms", n ? json_real((double)t[n - 1] / 1e6) : json_null());
    free(t);
    return o;
}

static bool same_bytes(const sbx_result *a, const sbx_result *b,
                       const void *(*get)(const sbx_result *, size_t *))
{
    size_t la, lb;
    const void *pa = get(a, &la), *pb = get(b, &lb);

    return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
}

/* Run @i on every lane: do the backends that gave a verdict agree? */
static json_t *agreement(const struct lane *lanes, size_t n_lanes, size_t i, size_t *compared,
                         size_t *st_agree, size_t *out_agree)
{
    const sbx_result *first = NULL;
    bool st = true, out = true;
    size_t n = 0;

    for (size_t b = 0; b < n_lanes; b++) {
        const sbx_result *res = lanes[b].cells[i].res;
        if (!res || sbx_result_status(res) == SBX_RUN_SANDBOX_ERROR)
            continue;   /* not a verdict on the code */
        n++;
        if (!first) {
            first = res;
            continue;
        }
        st = st && sbx_result_status(res) == sbx_result_status(first) &&
             sbx_result_exit_code(res) == sbx_result_exit_code(first);
        out = out && same_bytes(res, first, sbx_result_stdout) &&
              same_bytes(res, first, sbx_result_stderr);
    }
    if (n < 2)
        return json_pack("{s:I, s:n, s:n}", "compared", (json_int_t)n, "status", "output");
    (*compared)++;
    *st_agree += st;
    *out_agree += out;
    return json_pack("{s:I, s:b, s:b}", "compared", (json_int_t)n, "status", st, "output", out);
}

static json_t *result_json(const sbx_result *res)
{
    char *text = sbx_result_to_json(res);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;

    free(text);
    return j;
}

static void run_batch(srv_req *r)
{
    json_t *j = srv_req_json(r), *runs, *backends, *inline_run = NULL, *out_runs = NULL;
    struct lane lanes[MAX_BACKENDS];
    const char *names[MAX_BACKENDS];
    size_t n_lanes = 0, n_runs, compared = 0, st_agree = 0, out_agree = 0;
    uint64_t t0 = srv_now_ns();

    memset(lanes, 0, sizeof lanes);
    if (!j)
        return;
    backends = json_object_get(j, "backends");
    runs = json_object_get(j, "runs");
    if (backends && !json_is_null(backends)) {
        if (!json_is_array(backends) || json_array_size(backends) == 0 ||
            json_array_size(backends) > MAX_BACKENDS) {
            srv_error(r, 400, "invalid", NULL, "field 'backends' must be an array of 1 to %d "
                      "provider names", MAX_BACKENDS);
            return;
        }
        for (size_t b = 0; b < json_array_size(backends); b++) {
            json_t *e = json_array_get(backends, b);
            if (!json_is_string(e)) {
                srv_error(r, 400, "invalid", NULL, "field 'backends[%zu]' must be a string", b);
                return;
            }
            names[n_lanes] = json_string_value(e);
            for (size_t k = 0; k < n_lanes; k++)
                if (!strcmp(names[k], names[n_lanes])) {
                    srv_error(r, 400, "invalid", NULL, "backend '%s' is listed twice",
                              names[k]);
                    return;
                }
            if (!sbx_ctx_find_provider(r->s->ctx, names[n_lanes])) {
                srv_error(r, 422, "not_found", names[n_lanes], "field 'backends[%zu]': no "
                          "provider '%s'", b, names[n_lanes]);
                return;
            }
            n_lanes++;
        }
    } else if ((names[0] = sbx_ctx_default_provider(r->s->ctx))) {
        n_lanes = 1;
    } else {
        srv_error(r, 503, "provider_unavailable", NULL, "no provider is ready");
        return;
    }
    if (runs && !json_is_null(runs)) {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
            if (strcmp(k, "runs") && strcmp(k, "backends")) {
                srv_error(r, 400, "invalid", NULL, "field '%s': with runs, each run carries "
                          "its own fields", k);
                return;
            }
        if (!json_is_array(runs) || json_array_size(runs) == 0 ||
            json_array_size(runs) > MAX_BATCH) {
            srv_error(r, 400, "invalid", NULL, "field 'runs' must be an array of 1 to %d runs",
                      MAX_BATCH);
            return;
        }
    } else {
        /* One run given inline: the body less the batch's own fields. */
        if (!(inline_run = json_deep_copy(j))) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return;
        }
        json_object_del(inline_run, "backends");
        json_object_del(inline_run, "runs");
        runs = json_pack("[O]", inline_run);
        json_decref(inline_run);
        inline_run = runs;   /* owned: freed at the end */
    }
    n_runs = json_array_size(runs);
    if (n_runs * n_lanes > MAX_BATCH) {
        srv_error(r, 400, "invalid", NULL, "%zu runs on %zu backends is more than %d runs",
                  n_runs, n_lanes, MAX_BATCH);
        goto out;
    }
    /* Parse every run for every backend before anything runs. */
    for (size_t b = 0; b < n_lanes; b++) {
        lanes[b] = (struct lane){ r, names[b], calloc(n_runs, sizeof(struct cell)), n_runs, 0,
                                  false };
        if (!lanes[b].cells) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n_runs; i++) {
            json_t *run = json_array_get(runs, i);
            struct cell *c = &lanes[b].cells[i];
            if (!json_is_object(run)) {
                srv_error(r, 400, "invalid", NULL, "field 'runs[%zu]' must be an object", i);
                goto out;
            }
            if (json_object_get(run, "provider") || json_object_get(run, "fallback") ||
                json_object_get(run, "backend")) {
                srv_error(r, 400, "invalid", NULL, "runs[%zu]: the backends are the batch's "
                          "(field 'backends'), not a run's", i);
                goto out;
            }
            if (srv_opts_from_json(r, run, SRV_OPT_CREATE | SRV_OPT_EXEC, NULL, &c->o) != 0)
                goto out;
            c->parsed = true;
            if (sbx_create_opts_set_provider(c->o.create, names[b]) != SBX_OK) {
                srv_error(r, 500, "nomem", NULL, "out of memory");
                goto out;
            }
        }
    }
    for (size_t b = 0; b < n_lanes; b++)
        lanes[b].started = pthread_create(&lanes[b].thread, NULL, lane_run, &lanes[b]) == 0;
    for (size_t b = 0; b < n_lanes; b++) {
        if (lanes[b].started)
            pthread_join(lanes[b].thread, NULL);
        else
            lane_run(&lanes[b]);   /* no thread: run it here, one after the other */
    }
    if (sbx_cancel_fired(r->cancel)) {
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
        goto out;
    }
    out_runs = json_array();
    for (size_t i = 0; i < n_runs; i++) {
        json_t *per = json_object(), *item;
        for (size_t b = 0; b < n_lanes; b++) {
            struct cell *c = &lanes[b].cells[i];
            json_object_set_new(per, names[b], c->res ? result_json(c->res)
                                : json_pack("{s:O}", "error", json_object_get(c->error,
                                                                               "error")));
        }
        item = json_pack("{s:I, s:o, s:o}", "index", (json_int_t)i, "results", per, "agree",
                         agreement(lanes, n_lanes, i, &compared, &st_agree, &out_agree));
        json_array_append_new(out_runs, item);
    }
    {
        json_t *summary = json_object(), *bl = json_array();
        for (size_t b = 0; b < n_lanes; b++) {
            json_object_set_new(summary, names[b], lane_summary(&lanes[b]));
            json_array_append_new(bl, json_string(names[b]));
        }
        srv_reply_json(r, 200, json_pack(
            "{s:o, s:O, s:o, s:{s:I, s:o, s:o}, s:f}", "backends", bl, "runs", out_runs,
            "summary", summary, "agreement", "compared", (json_int_t)compared, "status",
            compared ? json_real((double)st_agree / (double)compared) : json_null(), "output",
            compared ? json_real((double)out_agree / (double)compared) : json_null(),
            "wall_ms", (double)(srv_now_ns() - t0) / 1e6));
    }
out:
    json_decref(out_runs);
    for (size_t b = 0; b < n_lanes; b++) {
        for (size_t i = 0; lanes[b].cells && i < n_runs; i++) {
            struct cell *c = &lanes[b].cells[i];
            if (c->parsed)
                srv_opts_free(&c->o);
            sbx_result_free(c->res);
            json_decref(c->error);
        }
        free(lanes[b].cells);
    }
    json_decref(inline_run);
}

/* ---- /run_agent ----------------------------------------------------------------- */

enum step_kind { STEP_EXEC, STEP_WRITE, STEP_READ };

struct step {
    enum step_kind kind;
    json_t *args;             /* (borrowed) the step's object */
    srv_opts o;               /* exec */
    bool parsed;
    const char *path;         /* write, read */
    unsigned char *data;      /* write (owned) */
    size_t len;
    uint32_t mode;
};

static int parse_step(srv_req *r, size_t i, json_t *v, struct step *st)
{
    static const char *const kinds[] = { "exec", "write", "read" };
    const char *k = NULL;
    json_t *a = NULL, *e;

    if (json_is_object(v) && json_object_size(v) == 1) {
        void *it = json_object_iter(v);
        k = json_object_iter_key(it);
        a = json_object_iter_value(it);
    }
    for (st->kind = STEP_EXEC; k && st->kind <= STEP_READ; st->kind++)
        if (!strcmp(k, kinds[st->kind]))
            break;
    if (!k || st->kind > STEP_READ || !json_is_object(a)) {
        srv_error(r, 400, "invalid", NULL, "field 'steps[%zu]' must be one of "
                  "{\"exec\": {...}}, {\"write\": {...}}, {\"read\": {...}}", i);
        return -1;
    }
    st->args = a;
    if (st->kind == STEP_EXEC) {
        if (srv_opts_from_json(r, a, SRV_OPT_EXEC, NULL, &st->o) != 0)
            return -1;
        st->parsed = true;
        return 0;
    }
    e = json_object_get(a, "path");
    if (!json_is_string(e) || !srv_path_safe(json_string_value(e))) {
        srv_error(r, 400, "path", NULL, "field 'steps[%zu].%s.path' must be a path relative to "
                  "the work directory, without '..' or empty parts", i, k);
        return -1;
    }
    st->path = json_string_value(e);
    if (st->kind == STEP_READ)
        return 0;
    {
        json_t *c = json_object_get(a, "content"), *c64 = json_object_get(a, "content_base64");
        json_t *m = json_object_get(a, "mode");
        char field[64];
        st->mode = 0644;
        if ((c != NULL) == (c64 != NULL) || (c && !json_is_string(c)) ||
            (c64 && !json_is_string(c64))) {
            srv_error(r, 400, "invalid", NULL, "field 'steps[%zu].write' needs one of content "
                      "and content_base64, a string", i);
            return -1;
        }
        if (m) {
            if (!json_is_integer(m) || json_integer_value(m) < 0 ||
                json_integer_value(m) > 07777) {
                srv_error(r, 400, "invalid", NULL, "field 'steps[%zu].write.mode' must be a "
                          "mode between 0 and 4095 (0o7777)", i);
                return -1;
            }
            st->mode = (uint32_t)json_integer_value(m);
        }
        if (c) {
            st->len = json_string_length(c);
            if (!(st->data = malloc(st->len ? st->len : 1))) {
                srv_error(r, 500, "nomem", NULL, "out of memory");
                return -1;
            }
            memcpy(st->data, json_string_value(c), st->len);
            return 0;
        }
        snprintf(field, sizeof field, "steps[%zu].write.content_base64", i);
        return srv_base64_decode(r, field, json_string_value(c64), json_string_length(c64),
                                 &st->data, &st->len);
    }
}

/* One step in @sb: its entry of the answer; *ok false when it failed. */
static json_t *do_step(srv_req *r, sbx_sandbox *sb, size_t i, struct step *st, bool *ok)
{
    static const char *const kinds[] = { "exec", "write", "read" };
    uint64_t t0 = srv_now_ns();
    json_t *o = json_pack("{s:I, s:s}", "index", (json_int_t)i, "type", kinds[st->kind]);
    int rc = SBX_OK;

    *ok = true;
    if (st->kind == STEP_EXEC) {
        sbx_result *res = NULL;
        rc = sbx_sandbox_exec(sb, st->o.exec, &res);
        if (rc == SBX_OK) {
            json_object_set_new(o, "result", result_json(res));
            *ok = sbx_result_status(res) == SBX_RUN_OK;
            srv_metrics_run(r->s, sbx_sandbox_provider(sb), st->o.language,
                            sbx_run_status_name(sbx_result_status(res)), srv_now_ns() - t0);
        }
        sbx_result_free(res);
    } else if (st->kind == STEP_WRITE) {
        rc = sbx_sandbox_upload(sb, st->path, st->data, st->len, st->mode);
        if (rc == SBX_OK)
            json_object_set_new(o, "bytes", json_integer((json_int_t)st->len));
    } else {
        void *data = NULL;
        size_t len = 0;
        rc = sbx_sandbox_download(sb, st->path, r->s->conf.max_download, &data, &len);
        if (rc == SBX_OK) {
            json_t *text = json_stringn(data ? data : "", len);
            if (text) {
                json_object_set_new(o, "content", text);
            } else {
                json_t *enc = srv_b64_json(data, len);
                json_object_set_new(o, "content_base64", enc ? enc : json_null());
            }
            json_object_set_new(o, "bytes", json_integer((json_int_t)len));
        }
        free(data);
    }
    if (st->kind != STEP_EXEC)
        json_object_set_new(o, "path", json_string(st->path));
    if (rc != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(r->s->ctx);
        const char *code;
        srv_status_of(rc, 404, &code);
        json_t *err = srv_error_json(code, sbx_sandbox_provider(sb), sbx_error_message(e));
        json_object_set(o, "error", json_object_get(err, "error"));
        json_decref(err);
        *ok = false;
    }
    json_object_set_new(o, "time_ms", json_real((double)(srv_now_ns() - t0) / 1e6));
    return o;
}

static void run_agent(srv_req *r)
{
    static const char *const extra[] = { "steps", "keep", "stop_on_error", NULL };
    json_t *j = srv_req_json(r), *steps, *out = NULL;
    struct step *st = NULL;
    size_t n = 0, done = 0;
    bool keep = false, stop = false, created = true;
    sbx_sandbox *sb = NULL;
    struct srv_box *box = NULL;
    uint64_t t0 = srv_now_ns();
    srv_opts o;

    if (!j || srv_opts_from_json(r, j, SRV_OPT_CREATE | SRV_OPT_PERSIST, extra, &o) != 0)
        return;
    if (srv_json_bool(r, j, "keep", &keep) != 0 ||
        srv_json_bool(r, j, "stop_on_error", &stop) != 0)
        goto out;
    if (!keep && (o.get_or_create || json_object_get(j, "ttl"))) {
        srv_error(r, 400, "invalid", NULL, "field '%s' goes with \"keep\": true",
                  o.get_or_create ? "get_or_create" : "ttl");
        goto out;
    }
    steps = json_object_get(j, "steps");
    if (!json_is_array(steps) || json_array_size(steps) == 0 ||
        json_array_size(steps) > MAX_STEPS) {
        srv_error(r, 400, "invalid", NULL, "field 'steps' must be an array of 1 to %d steps",
                  MAX_STEPS);
        goto out;
    }
    n = json_array_size(steps);
    if (!(st = calloc(n, sizeof *st))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (parse_step(r, i, json_array_get(steps, i), &st[i]) != 0)
            goto out;
    if (keep) {
        sbx_create_opts_set_persistent(o.create, true);
        if (!json_object_get(j, "ttl"))
            sbx_create_opts_set_ttl(o.create, r->s->conf.sandbox_ttl_ns);
    }
    {
        int rc = o.get_or_create ? sbx_sandbox_get_or_create(r->s->ctx, o.create, &sb, &created)
                                 : sbx_sandbox_create(r->s->ctx, o.create, &sb);
        if (rc != SBX_OK) {
            srv_error_lib(r, rc, 422);
            goto out;
        }
    }
    out = json_array();
    for (size_t i = 0; i < n && !sbx_cancel_fired(r->cancel); i++) {
        bool ok;
        if (st[i].kind == STEP_EXEC)
            sbx_exec_opts_set_cancel(st[i].o.exec, r->cancel);
        json_array_append_new(out, do_step(r, sb, i, &st[i], &ok));
        done++;
        if (!ok && stop)
            break;
    }
    /* Kept: known to the server from now on, as if made by POST /v1/sandboxes. */
    if (keep && !(box = srv_box_track(r->s, sb, created, r)))
        goto out;
    if (sbx_cancel_fired(r->cancel) && !keep) {
        sbx_sandbox_destroy(sb);
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
        goto out;
    }
    srv_reply_json(r, 200, json_pack("{s:s, s:s, s:b, s:b, s:O, s:I, s:I, s:f}", "sandbox_id",
                                     sbx_sandbox_id(sb), "provider", sbx_sandbox_provider(sb),
                                     "kept", keep, "created", created, "steps", out,
                                     "completed", (json_int_t)done, "total", (json_int_t)n,
                                     "total_ms", (double)(srv_now_ns() - t0) / 1e6));
    if (!keep)
        sbx_sandbox_destroy(sb);
out:
    if (box)
        srv_box_put(r->s, box);
    json_decref(out);
    for (size_t i = 0; st && i < n; i++) {
        if (st[i].parsed)
            srv_opts_free(&st[i].o);
        free(st[i].data);
    }
    free(st);
    srv_opts_free(&o);
}

static const srv_route routes[] = {
    { SRV_POST, "/run_single", run_single, SRV_R_WORKER },
    { SRV_POST, "/run_batch", run_batch, SRV_R_WORKER },
    { SRV_POST, "/run_agent", run_agent, SRV_R_WORKER },
};

int srv_routes_seed(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
