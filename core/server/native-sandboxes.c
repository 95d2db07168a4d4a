/* core/server/native-sandboxes.c - stateful sandboxes
 *
 *   POST   /v1/sandboxes                      create (get-or-create by labels)
 *   GET    /v1/sandboxes?label=K=V&provider=P list
 *   GET    /v1/sandboxes/{id}                 describe
 *   DELETE /v1/sandboxes/{id}                 destroy
 *   POST   /v1/sandboxes/{id}/exec            run in it (JSON, or SSE)
 *   PUT    /v1/sandboxes/{id}/files/{path}    upload the body's bytes
 *   GET    /v1/sandboxes/{id}/files/{path}    download
 *   GET    /v1/sandboxes/{id}/files?path=DIR  list a directory
 *
 * Sandboxes are created persistent (so they are found by id and labels)
 * with a time-to-live ([server] sandbox_ttl unless the body gives one) so
 * that `polysandbox gc` reaps them should the server die; the server
 * destroys the ones it made when it stops.  A sandbox id not made here
 * is looked for on ?provider= or the default provider.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "compat.h"
#include "file-json.h"
#include "server.h"
#include "server-int.h"

/* ---- helpers ------------------------------------------------------------------ */

static json_t *labels_json(const char *const *labels, size_t n)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < n; i++) {
        const char *eq = strchr(labels[i], '=');
        char key[256];
        if (!eq || (size_t)(eq - labels[i]) >= sizeof key)
            continue;
        memcpy(key, labels[i], (size_t)(eq - labels[i]));
        key[eq - labels[i]] = '\0';
        json_object_set_new(o, key, json_string(eq + 1));
    }
    return o;
}

static json_t *box_json(const char *id, const char *provider, json_t *labels,
                        uint64_t created_unix_ns)
{
    return json_pack("{s:s, s:s, s:o, s:o}", "id", id, "provider", provider, "labels",
                     labels ? labels : json_object(), "created_at",
                     created_unix_ns ? json_integer((json_int_t)(created_unix_ns / 1000000000u))
                                     : json_null());
}

/* The entry of {id}: made here, else on ?provider= or the default
 * provider.  NULL after a reply. */
static struct srv_box *find_box(srv_req *r)
{
    const char *id = srv_req_param(r, "id");
    const char *prov = srv_req_query(r, "provider");
    struct srv_box *b;

    if (prov && !sbx_ctx_find_provider(r->s->ctx, prov)) {
        srv_error(r, 422, "not_found", prov, "unknown provider '%s'", prov);
        return NULL;
    }
    if ((b = srv_box_get(r->s, prov, id)))
        return b;
    if (!prov && !(prov = sbx_ctx_default_provider(r->s->ctx))) {
        srv_error(r, 503, "provider_unavailable", NULL, "no provider is ready");
        return NULL;
    }
    if (!(b = srv_box_get(r->s, prov, id)))
        srv_error(r, 500, "nomem", NULL, "out of memory");
    return b;
}

/* Take {id}'s lock and its handle; NULL after a reply (404 when there is
 * no such sandbox). */
struct srv_box *srv_box_use(srv_req *r, sbx_sandbox **sb)
{
    struct srv_box *b = find_box(r);
    int rc;

    if (!b)
        return NULL;
    if (srv_box_lock(b) != 0) {
        srv_error(r, 404, "not_found", srv_box_provider(b), "sandbox %s was destroyed",
                  srv_box_id(b));
        srv_box_put(r->s, b);
        return NULL;
    }
    if ((rc = srv_box_handle(r->s, b, sb)) != SBX_OK) {
        srv_error_lib(r, rc, 404);
        srv_box_unlock(b);
        srv_box_put(r->s, b);
        return NULL;
    }
    return b;
}

void srv_box_done(srv_req *r, struct srv_box *b)
{
    srv_box_unlock(b);
    srv_box_put(r->s, b);
}

/* ---- create, list, describe, destroy ------------------------------------------- */

static void create(srv_req *r)
{
    static const char *const extra[] = { "persistent", NULL };
    json_t *j = srv_req_json(r);
    sbx_sandbox *sb = NULL;
    struct srv_box *b;
    bool created = true;
    srv_opts o;
    int rc;

    if (!j || srv_opts_from_json(r, j, SRV_OPT_CREATE | SRV_OPT_PERSIST, extra, &o) != 0)
        return;
    if (json_object_get(j, "persistent") && !json_is_true(json_object_get(j, "persistent"))) {
        srv_error(r, 400, "invalid", NULL, "field 'persistent': sandboxes made here are "
                  "always persistent (use POST /v1/run for a one-shot run)");
        goto out;
    }
    sbx_create_opts_set_persistent(o.create, true);
    if (!json_object_get(j, "ttl") || json_is_null(json_object_get(j, "ttl")))
        sbx_create_opts_set_ttl(o.create, r->s->conf.sandbox_ttl_ns);
    rc = o.get_or_create ? sbx_sandbox_get_or_create(r->s->ctx, o.create, &sb, &created)
                         : sbx_sandbox_create(r->s->ctx, o.create, &sb);
    if (rc != SBX_OK) {
        srv_error_lib(r, rc, 422);
        goto out;
    }
    if (!(b = srv_box_track(r->s, sb, created, r)))
        goto out;
    srv_reply_json(r, created ? 201 : 200,
                   json_pack("{s:s, s:s, s:b, s:o}", "id", srv_box_id(b), "provider",
                             srv_box_provider(b), "created", created, "labels",
                             labels_json((const char *const *)o.labels, o.n_labels)));
    {
        char loc[200];
        snprintf(loc, sizeof loc, "/v1/sandboxes/%s", srv_box_id(b));
        srv_reply_header(r, "Location", loc);
    }
    srv_box_put(r->s, b);
out:
    srv_opts_free(&o);
}

struct listing {
    json_t *arr;
    const char *provider;
    const char *only_id;       /* describe: this id alone */
};

static int on_listed(void *ud, const char *id, const char *const *labels, size_t n,
                     uint64_t created)
{
    struct listing *l = ud;

    if (l->only_id && strcmp(id, l->only_id) != 0)
        return 0;
    json_array_append_new(l->arr, box_json(id, l->provider, labels_json(labels, n), created));
    return l->only_id ? 1 : 0;
}

static void list(srv_req *r)
{
    const char *filter[32];
    size_t nf = 0;
    const char *prov = srv_req_query(r, "provider");
    struct listing l = { json_array(), NULL, NULL };
    json_t *unlisted = NULL;    /* the providers whose listing failed */
    size_t np = sbx_ctx_provider_count(r->s->ctx);

    for (size_t i = 0; i < srv_req_query_count(r); i++) {
        const char *k, *v;
        srv_req_query_at(r, i, &k, &v);
        if (!strcmp(k, "provider"))
            continue;
        if (strcmp(k, "label") != 0) {
            srv_error(r, 400, "invalid", NULL, "unknown query parameter '%s' (known: label, "
                      "provider)", k);
            goto out;
        }
        if (!strchr(v, '=') || *v == '=') {
            srv_error(r, 400, "invalid", NULL, "label '%s' must be KEY=VALUE", v);
            goto out;
        }
        if (nf == sizeof filter / sizeof filter[0]) {
            srv_error(r, 400, "invalid", NULL, "at most 32 labels");
            goto out;
        }
        filter[nf++] = v;
    }
    if (prov && !sbx_ctx_find_provider(r->s->ctx, prov)) {
        srv_error(r, 422, "not_found", prov, "unknown provider '%s'", prov);
        goto out;
    }
    for (size_t i = 0; i < np; i++) {
        const sbx_provider *p = sbx_ctx_provider(r->s->ctx, i);
        int rc;
        l.provider = sbx_provider_name(p);
        if (prov ? strcmp(prov, l.provider) != 0
                 : (sbx_provider_get_state(p) != SBX_PROVIDER_READY ||
                    !(sbx_provider_capabilities(p) & SBX_CAP_LIST)))
            continue;
        size_t before = json_array_size(l.arr);
        rc = sbx_list_labeled(r->s->ctx, l.provider, filter, nf, on_listed, &l);
        if (rc == SBX_OK)
            continue;
        if (prov) {
            srv_error_lib(r, rc, 422);
            goto out;
        }
        /* Every provider: one that is down (a stopped dockerd, a cloud
         * out of reach) must not hide the others' sandboxes.  What it
         * may have listed is dropped, and it is named with its error. */
        while (json_array_size(l.arr) > before)
            json_array_remove(l.arr, before);
        const char *msg = srv_lib_message(r->s, rc);
        if (!unlisted)
            unlisted = json_array();
        /* A provider's message may quote a peer's bytes: made text, never
         * a pack that fails and drops the entry. */
        json_array_append_new(unlisted, json_pack("{s:s,s:o}", "provider", l.provider, "error",
                                                  srv_json_text(msg, strlen(msg))));
    }
    json_t *body = json_pack("{s:O}", "sandboxes", l.arr);
    if (body && unlisted)
        json_object_set(body, "unlisted", unlisted);
    srv_reply_json(r, 200, body);
out:
    json_decref(unlisted);
    json_decref(l.arr);
}

static void describe(srv_req *r)
{
    struct srv_box *b = find_box(r);
    struct listing l = { json_array(), NULL, NULL };
    sbx_sandbox *sb;
    int rc;

    if (!b)
        goto out;
    l.provider = srv_box_provider(b);
    l.only_id = srv_box_id(b);
    rc = sbx_list(r->s->ctx, l.provider, on_listed, &l);
    if (rc == SBX_OK || rc == 1) {
        if (json_array_size(l.arr))
            srv_reply_json(r, 200, json_incref(json_array_get(l.arr, 0)));
        else
            srv_error(r, 404, "not_found", l.provider, "no sandbox %s on provider %s",
                      l.only_id, l.provider);
    } else if (rc == SBX_E_NOTSUP) {
        /* A provider that cannot list: it exists when it opens. */
        if (srv_box_lock(b) != 0) {
            srv_error(r, 404, "not_found", l.provider, "sandbox %s was destroyed", l.only_id);
        } else {
            rc = srv_box_handle(r->s, b, &sb);
            if (rc == SBX_OK)
                srv_reply_json(r, 200, box_json(l.only_id, l.provider, NULL, 0));
            else
                srv_error_lib(r, rc, 404);
            srv_box_unlock(b);
        }
    } else {
        srv_error_lib(r, rc, 404);
    }
    srv_box_put(r->s, b);
out:
    json_decref(l.arr);
}

static void destroy(srv_req *r)
{
    struct srv_box *b = find_box(r);
    int rc;

    if (!b)
        return;
    /* An exec running in it stops now rather than hold the destroy. */
    srv_box_interrupt(r->s, b);
    if (srv_box_lock(b) != 0) {
        srv_error(r, 404, "not_found", srv_box_provider(b), "sandbox %s was destroyed",
                  srv_box_id(b));
        srv_box_put(r->s, b);
        return;
    }
    rc = srv_box_destroy(r->s, b);
    if (rc == SBX_OK)
        srv_reply_json(r, 200, json_pack("{s:s, s:s, s:b}", "id", srv_box_id(b), "provider",
                                         srv_box_provider(b), "destroyed", 1));
    else
        srv_error_lib(r, rc, 404);
    srv_box_done(r, b);
}

/* ---- exec ------------------------------------------------------------------------- */

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    srv_req *r = ud;

    return srv_sse_output(r, stream, buf, len) != 0 || srv_req_gone(r);
}

static void exec(srv_req *r)
{
    json_t *j = srv_req_json(r);
    sbx_result *res = NULL;
    sbx_sandbox *sb;
    struct srv_box *b;
    uint64_t t0 = srv_now_ns();
    srv_opts o;
    int rc;

    if (!j || srv_opts_from_json(r, j, SRV_OPT_EXEC, NULL, &o) != 0)
        return;
    if (!(b = srv_box_use(r, &sb)))
        goto out;
    if (srv_req_wants_sse(r)) {
        if (srv_sse_begin(r) != 0) {
            srv_box_done(r, b);
            goto out;
        }
        sbx_exec_opts_set_output_cb(o.exec, on_output, r);
    }
    srv_box_busy(r->s, b, r->cancel);
    rc = sbx_sandbox_exec(sb, o.exec, &res);
    srv_box_busy(r->s, b, NULL);
    if (rc == SBX_OK && sbx_result_status(res) == SBX_RUN_SANDBOX_ERROR &&
        sbx_result_error_code(res) != SBX_E_CANCELLED)
        srv_box_drop_handle(b);   /* reopen (or find it gone) next time */
    srv_box_done(r, b);
    srv_run_result(r, &o, rc, res, t0);
out:
    sbx_result_free(res);
    srv_opts_free(&o);
}

/* ---- files -------------------------------------------------------------------------- */

/* {path}: relative, no "..", no empty parts.  NULL after a 400. */
static const char *file_path(srv_req *r)
{
    const char *p = srv_req_param(r, "path");

    if (!p || !*p || *p == '/') {
        srv_error(r, 400, "path", NULL, "the file path must be relative to the sandbox's "
                  "work directory");
        return NULL;
    }
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.') || (n == 1 && s[0] == '.')) {
            srv_error(r, 400, "path", NULL, "the file path '%s' has a '..', '.' or empty "
                      "part", p);
            return NULL;
        }
        s += n;
        if (*s)
            s++;
    }
    return p;
}

static void put_file(srv_req *r)
{
    const char *path = file_path(r), *m = srv_req_query(r, "mode");
    unsigned long mode = 0644;
    sbx_sandbox *sb;
    struct srv_box *b;
    int rc;

    if (!path)
        return;
    if (m) {
        char *end;
        mode = strtoul(m, &end, 8);
        if (!*m || *end || mode > 07777) {
            srv_error(r, 400, "invalid", NULL, "mode '%s' must be octal, e.g. 0755", m);
            return;
        }
    }
    if (!(b = srv_box_use(r, &sb)))
        return;
    rc = sbx_sandbox_upload(sb, path, r->body ? r->body : "", r->body_len, (uint32_t)mode);
    if (rc == SBX_OK)
        srv_reply_json(r, 200, json_pack("{s:s, s:I, s:s}", "path", path, "bytes",
                                         (json_int_t)r->body_len, "sandbox_id", srv_box_id(b)));
    else
        srv_error_lib(r, rc, 404);
    srv_box_done(r, b);
}

static void get_file(srv_req *r)
{
    const char *path = file_path(r);
    sbx_sandbox *sb;
    struct srv_box *b;
    void *data = NULL;
    size_t len = 0;
    int rc;

    if (!path || !(b = srv_box_use(r, &sb)))
        return;
    rc = sbx_sandbox_download(sb, path, r->s->conf.max_download, &data, &len);
    if (rc == SBX_OK)
        srv_reply(r, 200, "application/octet-stream", data, len);
    else
        srv_error_lib(r, rc, 404);
    srv_box_done(r, b);
}

#define LIST_MAX_DEFAULT 1000u
#define LIST_MAX_LIMIT 10000u

struct file_listing {
    json_t *arr;
    srv_req *r;
};

static int on_file(void *ud, const char *name, size_t len, sbx_file_type type, uint64_t size,
                   int64_t mtime)
{
    struct file_listing *l = ud;
    json_t *e = srv_file_json(name, len, type, size, mtime);

    return e && json_array_append_new(l->arr, e) == 0 ? 0 : SBX_E_NOMEM;
}

static void list_files(srv_req *r)
{
    const char *dir = srv_req_query(r, "path"), *m = srv_req_query(r, "limit");
    struct file_listing l = { json_array(), r };
    unsigned long max = LIST_MAX_DEFAULT;
    bool more = false;
    sbx_sandbox *sb;
    struct srv_box *b;
    int rc;

    if (!l.arr) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    if (m) {
        char *end;
        max = strtoul(m, &end, 10);
        if (!*m || *end || max == 0 || max > LIST_MAX_LIMIT) {
            srv_error(r, 400, "invalid", NULL, "limit '%s' must be a number from 1 to %u", m,
                      LIST_MAX_LIMIT);
            goto out;
        }
    }
    /* The library checks the path (SBX_E_PATH: 400). */
    if (!(b = srv_box_use(r, &sb)))
        goto out;
    rc = sbx_sandbox_list_files(sb, dir ? dir : "", max, on_file, &l, &more);
    if (rc == SBX_OK)
        srv_reply_json(r, 200, json_pack("{s:s, s:s, s:O, s:b}", "sandbox_id", srv_box_id(b),
                                          "path", dir && *dir ? dir : ".", "entries", l.arr,
                                          "truncated", more));
    else
        srv_error_lib(r, rc, 404);
    srv_box_done(r, b);
out:
    json_decref(l.arr);
}

static const srv_route routes[] = {
    { SRV_POST, "/v1/sandboxes", create, SRV_R_WORKER },
    { SRV_GET, "/v1/sandboxes", list, SRV_R_WORKER },
    { SRV_GET, "/v1/sandboxes/{id}", describe, SRV_R_WORKER },
    { SRV_DELETE, "/v1/sandboxes/{id}", destroy, SRV_R_WORKER },
    { SRV_POST, "/v1/sandboxes/{id}/exec", exec, SRV_R_WORKER },
    { SRV_PUT, "/v1/sandboxes/{id}/files/{path*}", put_file, SRV_R_WORKER | SRV_R_RAW },
    { SRV_GET, "/v1/sandboxes/{id}/files/{path*}", get_file, SRV_R_WORKER },
    { SRV_GET, "/v1/sandboxes/{id}/files", list_files, SRV_R_WORKER },
};

int srv_routes_sandboxes(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
