/* plugins/modal/modal-api.c - calls to Modal's control plane (ModalClient)
 *
 * Every call carries the client's identity, the token id and secret (read
 * from the host's secret store for the call and wiped after), and, but
 * for AuthTokenGet itself, the short-lived auth token AuthTokenGet hands
 * out: a JWT, kept until half its life has passed, as Modal's SDKs do.  A
 * call refused as unauthenticated with a kept token fetches a new one and
 * is made once more.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modal-int.h"

#define SVC "/modal.client.ModalClient/"
/* The SDK whose calls this provider makes (the JavaScript one): its client
 * type and the Python SDK version it behaves as (api.proto's ClientType). */
#define CLIENT_TYPE "8"
#define CLIENT_VERSION "1.0.0"
#define LIST_PAGES_MAX 1000

/* ---- metadata ---- */

static char *header_line(const char *name, const char *value, size_t vlen)
{
    size_t nl = strlen(name), n = nl + 2 + vlen + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    memcpy(s, name, nl);
    memcpy(s + nl, ": ", 2);
    memcpy(s + nl + 2, value, vlen);
    s[n - 1] = '\0';
    return s;
}

void modal_wipe_free(char *s)
{
    if (!s)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

void modal_headers_free(char *lines[8])
{
    for (int i = 0; i < 8; i++) {
        modal_wipe_free(lines[i]);
        lines[i] = NULL;
    }
}

/* The secret @key as a header line, refusing what cannot be one. */
static int secret_line(struct modal_prov *p, const char *what, const char *key,
                       const char *name, char **out)
{
    const char *v = NULL;
    size_t n = 0;
    *out = NULL;
    int rc = p->host->secret_get(p->h, key, &v, &n);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: providers.d/modal.ini sets no %s "
                                  "(e.g. %s = env:MODAL_%s)", what, key, key,
                                  !strcmp(key, "token_id") ? "TOKEN_ID" : "TOKEN_SECRET");
    if (rc != SBX_OK)
        return rc; /* the core said which reference failed, without the value */
    bool bad = n == 0 || memchr(v, '\n', n) || memchr(v, '\r', n) || memchr(v, '\0', n);
    *out = bad ? NULL : header_line(name, v, n);
    p->host->secret_release(p->h, v);
    if (bad)
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: the %s of providers.d/modal.ini is "
                                  "empty or spans lines", what, key);
    if (!*out)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

static int identity(struct modal_prov *p, const char *what, char *lines[8])
{
    memset(lines, 0, 8 * sizeof *lines);
    int rc;
    if (!(lines[0] = strdup("x-modal-client-type: " CLIENT_TYPE)) ||
        !(lines[1] = strdup("x-modal-client-version: " CLIENT_VERSION)) ||
        !(lines[2] = strdup("x-modal-libmodal-version: polysandbox-modal/" PACKAGE_VERSION))) {
        modal_headers_free(lines);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    if ((rc = secret_line(p, what, "token_id", "x-modal-token-id", &lines[3])) ||
        (rc = secret_line(p, what, "token_secret", "x-modal-token-secret", &lines[4]))) {
        modal_headers_free(lines);
        return rc;
    }
    return SBX_OK;
}

/* AuthTokenGet: a fresh token into the cache. */
static int fetch_token(struct modal_prov *p, const char *what)
{
    char *lines[8];
    int rc = identity(p, what, lines);
    if (rc)
        return rc;
    Modal__Client__AuthTokenGetRequest req = MODAL__CLIENT__AUTH_TOKEN_GET_REQUEST__INIT;
    Modal__Client__AuthTokenGetResponse *ans = NULL;
    mg_call call = {.path = SVC "AuthTokenGet", .headers = (const char *const *)lines,
                    .request = &req.base, .timeout_ms = p->request_timeout_ms};
    mg_status st;
    char err[PH_ERR_MAX] = "";
    rc = mg_call_do(p->api, &call, &modal__client__auth_token_get_response__descriptor,
                    (ProtobufCMessage **)&ans, &st, err);
    modal_headers_free(lines);
    if (rc)
        return modal_call_error(p, NULL, what, rc, &st, err);
    if (!ans->token || !*ans->token || strpbrk(ans->token, "\r\n")) {
        modal__client__auth_token_get_response__free_unpacked(ans, NULL);
        return p->host->set_error(p->h, SBX_E_BACKEND, "%s: AuthTokenGet answered no usable "
                                  "token", what);
    }
    time_t now = time(NULL), exp = modal_jwt_exp(ans->token);
    if (exp <= 0)
        exp = now + 20 * 60; /* the SDKs' default when the token says nothing */
    char *tok = strdup(ans->token);
    explicit_bzero(ans->token, strlen(ans->token));
    modal__client__auth_token_get_response__free_unpacked(ans, NULL);
    if (!tok)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    pthread_mutex_lock(&p->lock);
    modal_wipe_free(p->auth_token);
    p->auth_token = tok;
    p->token_exp = exp;
    p->token_refresh = now + (exp > now ? (exp - now) / 2 : 0);
    pthread_mutex_unlock(&p->lock);
    p->host->log(p->h, SBX_LOG_DEBUG, "fetched an auth token, valid for %lld s",
                 (long long)(exp - now));
    return SBX_OK;
}

/* The cached token as a header line: fetched when missing or past its
 * refresh point (an old, unexpired one is kept when the refresh fails). */
static int token_line(struct modal_prov *p, const char *what, char **out)
{
    *out = NULL;
    time_t now = time(NULL);
    pthread_mutex_lock(&p->lock);
    bool fresh = p->auth_token && now < p->token_refresh;
    pthread_mutex_unlock(&p->lock);
    if (!fresh) {
        int rc = fetch_token(p, what);
        pthread_mutex_lock(&p->lock);
        bool usable = p->auth_token && now < p->token_exp;
        pthread_mutex_unlock(&p->lock);
        if (rc && (!usable || rc == SBX_E_AUTH || rc == SBX_E_CONFIG))
            return rc;
        if (rc)
            p->host->log(p->h, SBX_LOG_WARNING, "%s: could not renew the auth token; using "
                         "the current one until it expires", what);
    }
    pthread_mutex_lock(&p->lock);
    *out = p->auth_token ? header_line("x-modal-auth-token", p->auth_token,
                                       strlen(p->auth_token)) : NULL;
    pthread_mutex_unlock(&p->lock);
    if (!*out)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

/* Forgets the cached token if it is still @line's (another thread may
 * have renewed it already). */
static void drop_token(struct modal_prov *p, const char *line)
{
    static const char prefix[] = "x-modal-auth-token: ";
    pthread_mutex_lock(&p->lock);
    if (p->auth_token && line && !strcmp(line + sizeof prefix - 1, p->auth_token))
        p->token_refresh = 0;
    pthread_mutex_unlock(&p->lock);
}

int modal_headers(struct modal_prov *p, const char *what, bool with_token, char *lines[8])
{
    int rc = identity(p, what, lines);
    if (!rc && with_token && (rc = token_line(p, what, &lines[5])))
        modal_headers_free(lines);
    return rc;
}

/* ---- errors ---- */

int modal_call_error(struct modal_prov *p, struct modal_sb *sb, const char *what, int rc,
                     const mg_status *st, const char *err)
{
    if (st->retry_after_ms >= 0)
        modal_retry_after(p, sb, st->retry_after_ms);
    char hint[64] = "";
    if (st->retry_after_ms >= 0)
        snprintf(hint, sizeof hint, " (retry after %.1f s)", st->retry_after_ms / 1000.0);
    const char *more = "";
    if (st->code == MG_UNAUTHENTICATED || st->code == MG_PERMISSION_DENIED)
        more = " (check token_id and token_secret in providers.d/modal.ini)";
    return p->host->set_error(p->h, rc, "Modal: %s: %s%s%s", what, err, hint, more);
}

/* ---- calls ---- */

static int call_once(struct modal_prov *p, const char *what, const char *path,
                     const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                     ProtobufCMessage **reply, long timeout_ms,
                     int (*on_message)(void *, const uint8_t *, size_t), void *ud,
                     mg_status *st, char err[PH_ERR_MAX], char **sent_token)
{
    char *lines[8];
    int rc = modal_headers(p, what, true, lines);
    if (rc) {
        st->code = -2; /* the error is set already */
        return rc;
    }
    mg_call call = {.path = path, .headers = (const char *const *)lines, .request = req,
                    .timeout_ms = timeout_ms > 0 ? timeout_ms : p->request_timeout_ms,
                    .on_message = on_message, .ud = ud};
    rc = mg_call_do(p->api, &call, reply_desc, reply, st, err);
    *sent_token = lines[5];
    lines[5] = NULL;
    modal_headers_free(lines);
    return rc;
}

static int call(struct modal_prov *p, const char *what, const char *method,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                ProtobufCMessage **reply, long timeout_ms,
                int (*on_message)(void *, const uint8_t *, size_t), void *ud, mg_status *st,
                char err[PH_ERR_MAX])
{
    char path[128], *tok = NULL;
    snprintf(path, sizeof path, SVC "%s", method);
    int rc = call_once(p, what, path, req, reply_desc, reply, timeout_ms, on_message, ud, st,
                       err, &tok);
    if (rc && st->code == MG_UNAUTHENTICATED && tok) {
        /* The token may have expired early (or been revoked): renew once. */
        p->host->log(p->h, SBX_LOG_DEBUG, "%s: auth token refused, renewing it", what);
        drop_token(p, tok);
        modal_wipe_free(tok);
        tok = NULL;
        rc = call_once(p, what, path, req, reply_desc, reply, timeout_ms, on_message, ud, st,
                       err, &tok);
    }
    modal_wipe_free(tok);
    return rc;
}

int modal_api_st(struct modal_prov *p, struct modal_sb *sb, const char *what, const char *method,
                 const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                 ProtobufCMessage **reply, long timeout_ms, int quiet, mg_status *stp)
{
    /* cppcheck-suppress uninitvar ; call() fills st before any read */
    mg_status st0, *st = stp ? stp : &st0;
    char err[PH_ERR_MAX] = "";
    int rc = call(p, what, method, req, reply_desc, reply, timeout_ms, NULL, NULL, st, err);
    if (rc && st->code != -2 && quiet != MODAL_SILENT && !(quiet >= 0 && st->code == quiet))
        modal_call_error(p, sb, what, rc, st, err);
    return rc;
}

int modal_api(struct modal_prov *p, const char *what, const char *method,
              const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
              ProtobufCMessage **reply, long timeout_ms, int quiet)
{
    return modal_api_st(p, NULL, what, method, req, reply_desc, reply, timeout_ms, quiet, NULL);
}

int modal_api_stream(struct modal_prov *p, const char *what, const char *method,
                     const ProtobufCMessage *req, long timeout_ms,
                     int (*on_message)(void *ud, const uint8_t *msg, size_t len), void *ud,
                     mg_status *st)
{
    char err[PH_ERR_MAX] = "";
    int rc = call(p, what, method, req, NULL, NULL, timeout_ms, on_message, ud, st, err);
    if (rc && st->code != -2)
        modal_call_error(p, NULL, what, rc, st, err);
    return rc;
}

/* ---- apps, images, secrets ---- */

int modal_app_id(struct modal_prov *p, char **out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->app_id ? strdup(p->app_id) : NULL;
    bool have = p->app_id != NULL;
    pthread_mutex_unlock(&p->lock);
    if (have)
        return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    Modal__Client__AppGetOrCreateRequest req = MODAL__CLIENT__APP_GET_OR_CREATE_REQUEST__INIT;
    req.app_name = p->app_name;
    req.environment_name = p->environment;
    req.object_creation_type = MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_CREATE_IF_MISSING;
    Modal__Client__AppGetOrCreateResponse *ans = NULL;
    int rc = modal_api(p, "app", "AppGetOrCreate", &req.base,
                       &modal__client__app_get_or_create_response__descriptor,
                       (ProtobufCMessage **)&ans, 0, -1);
    if (rc)
        return rc;
    if (!ans->app_id || !*ans->app_id) {
        modal__client__app_get_or_create_response__free_unpacked(ans, NULL);
        return p->host->set_error(p->h, SBX_E_BACKEND, "Modal: AppGetOrCreate answered no app id");
    }
    pthread_mutex_lock(&p->lock);
    if (!p->app_id)
        p->app_id = strdup(ans->app_id);
    *out = p->app_id ? strdup(p->app_id) : NULL;
    pthread_mutex_unlock(&p->lock);
    modal__client__app_get_or_create_response__free_unpacked(ans, NULL);
    return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}

/* The environment's image builder version (the SDKs ask the server). */
static int builder_version(struct modal_prov *p, char **out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->builder_version ? strdup(p->builder_version) : NULL;
    bool have = p->builder_version != NULL;
    pthread_mutex_unlock(&p->lock);
    if (have)
        return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    Modal__Client__EnvironmentGetOrCreateRequest req =
        MODAL__CLIENT__ENVIRONMENT_GET_OR_CREATE_REQUEST__INIT;
    req.deployment_name = p->environment;
    Modal__Client__EnvironmentGetOrCreateResponse *ans = NULL;
    int rc = modal_api(p, "environment", "EnvironmentGetOrCreate", &req.base,
                       &modal__client__environment_get_or_create_response__descriptor,
                       (ProtobufCMessage **)&ans, 0, -1);
    if (rc)
        return rc;
    const char *v = ans->metadata && ans->metadata->settings
                        ? ans->metadata->settings->image_builder_version : NULL;
    pthread_mutex_lock(&p->lock);
    if (!p->builder_version)
        p->builder_version = strdup(v ? v : "");
    *out = p->builder_version ? strdup(p->builder_version) : NULL;
    pthread_mutex_unlock(&p->lock);
    modal__client__environment_get_or_create_response__free_unpacked(ans, NULL);
    return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}

struct join {
    int status;
    char exception[200];
    char last_entry[128];
};

static int on_join(void *ud, const uint8_t *msg, size_t len)
{
    struct join *j = ud;
    Modal__Client__ImageJoinStreamingResponse *r =
        modal__client__image_join_streaming_response__unpack(NULL, len, msg);
    if (!r)
        return SBX_E_BACKEND;
    if (r->entry_id && *r->entry_id)
        snprintf(j->last_entry, sizeof j->last_entry, "%s", r->entry_id);
    if (r->result && r->result->status) {
        j->status = r->result->status;
        snprintf(j->exception, sizeof j->exception, "%s",
                 r->result->exception ? r->result->exception : "");
    }
    modal__client__image_join_streaming_response__free_unpacked(r, NULL);
    return 0;
}

/* Waits for a build, as the SDKs do: ImageJoinStreaming until a result. */
static int join_build(struct modal_prov *p, const char *image_id, const char *ref)
{
    struct join j = {0};
    uint64_t t0 = modal_now_ns();
    while (!j.status) {
        if ((modal_now_ns() - t0) / 1000000 > (uint64_t)p->request_timeout_ms * 10)
            return p->host->set_error(p->h, SBX_E_TIMEOUT, "Modal: image '%s' (%s) was not "
                                      "built in %ld s", ref, image_id,
                                      p->request_timeout_ms / 100);
        Modal__Client__ImageJoinStreamingRequest req =
            MODAL__CLIENT__IMAGE_JOIN_STREAMING_REQUEST__INIT;
        req.image_id = (char *)image_id;
        req.timeout = 55;
        req.last_entry_id = j.last_entry;
        mg_status st;
        int rc = modal_api_stream(p, "image build", "ImageJoinStreaming", &req.base, 60000,
                                  on_join, &j, &st);
        if (rc)
            return rc;
    }
    if (j.status != MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_SUCCESS)
        return p->host->set_error(p->h, SBX_E_DECLINED, "Modal: the image '%s' could not be "
                                  "built (status %d)%s%s", ref, j.status,
                                  j.exception[0] ? ": " : "", j.exception);
    return SBX_OK;
}

int modal_image_id(struct modal_prov *p, const char *ref, char **out)
{
    *out = NULL;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->n_images; i++)
        if (!strcmp(p->images[i].ref, ref)) {
            *out = strdup(p->images[i].id);
            pthread_mutex_unlock(&p->lock);
            return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
    pthread_mutex_unlock(&p->lock);

    char *app = NULL, *bv = NULL, *from = NULL;
    int rc = modal_app_id(p, &app);
    if (!rc)
        rc = builder_version(p, &bv);
    if (!rc && asprintf(&from, "FROM %s", ref) < 0)
        from = NULL, rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    Modal__Client__ImageGetOrCreateResponse *ans = NULL;
    if (!rc) {
        Modal__Client__Image img = MODAL__CLIENT__IMAGE__INIT;
        img.n_dockerfile_commands = 1;
        img.dockerfile_commands = &from;
        Modal__Client__ImageGetOrCreateRequest req = MODAL__CLIENT__IMAGE_GET_OR_CREATE_REQUEST__INIT;
        req.image = &img;
        req.app_id = app;
        req.builder_version = bv;
        char what[300];
        snprintf(what, sizeof what, "image '%s'", ref);
        rc = modal_api(p, what, "ImageGetOrCreate", &req.base,
                       &modal__client__image_get_or_create_response__descriptor,
                       (ProtobufCMessage **)&ans, 0, -1);
    }
    free(app);
    free(bv);
    free(from);
    if (rc)
        return rc;
    if (!ans->image_id || !*ans->image_id)
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "Modal: ImageGetOrCreate answered no "
                                "image id for '%s'", ref);
    else if (!ans->result || !ans->result->status)
        rc = join_build(p, ans->image_id, ref);
    else if (ans->result->status !=
             MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_SUCCESS)
        rc = p->host->set_error(p->h, SBX_E_DECLINED, "Modal: the image '%s' could not be "
                                "built: %s", ref, ans->result->exception ? ans->result->exception
                                                                         : "no reason given");
    if (!rc && !(*out = strdup(ans->image_id)))
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (!rc) {
        pthread_mutex_lock(&p->lock);
        if (p->n_images < MODAL_IMAGE_CACHE) {
            struct modal_image *m = &p->images[p->n_images];
            m->ref = strdup(ref);
            m->id = strdup(*out);
            if (m->ref && m->id)
                p->n_images++;
            else {
                free(m->ref);
                free(m->id);
                m->ref = m->id = NULL;
            }
        }
        pthread_mutex_unlock(&p->lock);
    }
    modal__client__image_get_or_create_response__free_unpacked(ans, NULL);
    return rc;
}

int modal_env_secret(struct modal_prov *p, const sbx_kv_v1 *env, size_t n, char **out)
{
    *out = NULL;
    Modal__Client__SecretGetOrCreateRequest__EnvDictEntry *ents = calloc(n, sizeof *ents);
    Modal__Client__SecretGetOrCreateRequest__EnvDictEntry **ptrs = calloc(n, sizeof *ptrs);
    if (!ents || !ptrs) {
        free(ents);
        free(ptrs);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        modal__client__secret_get_or_create_request__env_dict_entry__init(&ents[i]);
        ents[i].key = (char *)env[i].key;
        ents[i].value = (char *)(env[i].value ? env[i].value : "");
        ptrs[i] = &ents[i];
    }
    Modal__Client__SecretGetOrCreateRequest req = MODAL__CLIENT__SECRET_GET_OR_CREATE_REQUEST__INIT;
    req.environment_name = p->environment;
    req.object_creation_type = MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_EPHEMERAL;
    req.n_env_dict = n;
    req.env_dict = ptrs;
    Modal__Client__SecretGetOrCreateResponse *ans = NULL;
    int rc = modal_api(p, "create: environment", "SecretGetOrCreate", &req.base,
                       &modal__client__secret_get_or_create_response__descriptor,
                       (ProtobufCMessage **)&ans, 0, -1);
    free(ents);
    free(ptrs);
    if (rc)
        return rc;
    if (!ans->secret_id || !*ans->secret_id)
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "Modal: SecretGetOrCreate answered no id");
    else if (!(*out = strdup(ans->secret_id)))
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    modal__client__secret_get_or_create_response__free_unpacked(ans, NULL);
    return rc;
}

/* ---- sandboxes ---- */

int modal_task_id(struct modal_prov *p, const char *sandbox_id, long wait_ms, char **out)
{
    char what[SBX_ID_MAX + 32];
    snprintf(what, sizeof what, "sandbox %s", sandbox_id);
    *out = NULL;
    uint64_t t0 = modal_now_ns();
    for (;;) {
        long left = wait_ms - (long)((modal_now_ns() - t0) / 1000000);
        if (left < 0)
            left = 0;
        float wait_s = left > 10000 ? 10.0f : (float)left / 1000.0f;
        Modal__Client__SandboxGetTaskIdRequest req = MODAL__CLIENT__SANDBOX_GET_TASK_ID_REQUEST__INIT;
        req.sandbox_id = (char *)sandbox_id;
        req._timeout_case = MODAL__CLIENT__SANDBOX_GET_TASK_ID_REQUEST___TIMEOUT_TIMEOUT;
        req.timeout = wait_s;
        Modal__Client__SandboxGetTaskIdResponse *ans = NULL;
        int rc = modal_api(p, what, "SandboxGetTaskId", &req.base,
                           &modal__client__sandbox_get_task_id_response__descriptor,
                           (ProtobufCMessage **)&ans, (long)(wait_s * 1000) + p->request_timeout_ms,
                           MG_NOT_FOUND);
        if (rc == SBX_E_NOT_FOUND)
            return p->host->set_error(p->h, SBX_E_NOT_FOUND, "no Modal sandbox '%s' (terminated, "
                                      "expired, or never made)", sandbox_id);
        if (rc)
            return rc;
        if (ans->_task_result_case && ans->task_result) {
            const Modal__Client__GenericResult *r = ans->task_result;
            rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, "Modal sandbox '%s' has finished "
                                    "(status %d%s%s)", sandbox_id, (int)r->status,
                                    r->exception && *r->exception ? ": " : "",
                                    r->exception ? r->exception : "");
        } else if (ans->_task_id_case && ans->task_id && *ans->task_id) {
            if (!(*out = strdup(ans->task_id)))
                rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        } else if (left == 0) {
            rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "Modal sandbox '%s' was not scheduled "
                                    "within %ld ms", sandbox_id, wait_ms);
        }
        bool done = rc || *out;
        modal__client__sandbox_get_task_id_response__free_unpacked(ans, NULL);
        if (done)
            return rc;
    }
}

int modal_terminate(struct modal_prov *p, const char *sandbox_id, bool report)
{
    char what[SBX_ID_MAX + 32];
    snprintf(what, sizeof what, "terminate %s", sandbox_id);
    Modal__Client__SandboxTerminateRequest req = MODAL__CLIENT__SANDBOX_TERMINATE_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    if (report)
        return modal_api(p, what, "SandboxTerminate", &req.base, NULL, NULL, 0, MG_NOT_FOUND);
    /* A clean-up after another error: nobody else holds the id to retry
     * it, so a transient failure is tried again here (terminating is
     * idempotent).  Ten tries, a second apart at most. */
    int rc = SBX_OK;
    for (int i = 0; i < 10; i++) {
        mg_status st;
        rc = modal_api_st(p, NULL, what, "SandboxTerminate", &req.base, NULL, NULL, 0, MODAL_SILENT, &st);
        /* Any failure but a refusal is tried again: a stream cut
         * mid-answer reads as a backend error, not a transport one. */
        if (!rc || st.code == MG_NOT_FOUND || rc == SBX_E_AUTH || rc == SBX_E_PERM ||
            rc == SBX_E_INVAL || rc == SBX_E_NOMEM || rc == SBX_E_CONFIG)
            break;
        long ms = 50L << i;
        modal_pause_ms(ms >= 1000 ? 1000 : ms);
    }
    if (rc)
        p->host->log(p->h, SBX_LOG_WARNING, "could not terminate Modal sandbox %s after a "
                     "failed create: its timeout will end it", sandbox_id);
    return rc;
}

int modal_list(struct modal_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
               sbx_list_cb_v1 cb, void *ud)
{
    char *app = NULL;
    int rc = modal_app_id(p, &app);
    if (rc)
        return rc;
    Modal__Client__SandboxTag *tags = calloc(n_filter ? n_filter : 1, sizeof *tags);
    Modal__Client__SandboxTag **tp = calloc(n_filter ? n_filter : 1, sizeof *tp);
    if (!tags || !tp) {
        free(tags);
        free(tp);
        free(app);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_filter; i++) {
        modal__client__sandbox_tag__init(&tags[i]);
        tags[i].tag_name = (char *)filter[i].key;
        tags[i].tag_value = (char *)(filter[i].value ? filter[i].value : "");
        tp[i] = &tags[i];
    }
    double before = 0;
    for (int page = 0; !rc && page < LIST_PAGES_MAX; page++) {
        Modal__Client__SandboxListRequest req = MODAL__CLIENT__SANDBOX_LIST_REQUEST__INIT;
        req.app_id = app;
        req.environment_name = p->environment;
        req.before_timestamp = before;
        req.n_tags = n_filter;
        req.tags = tp;
        Modal__Client__SandboxListResponse *ans = NULL;
        rc = modal_api(p, "list", "SandboxList", &req.base,
                       &modal__client__sandbox_list_response__descriptor,
                       (ProtobufCMessage **)&ans, 0, -1);
        if (rc)
            break;
        if (ans->n_sandboxes == 0) {
            modal__client__sandbox_list_response__free_unpacked(ans, NULL);
            break;
        }
        for (size_t i = 0; !rc && i < ans->n_sandboxes; i++) {
            const Modal__Client__SandboxInfo *s = ans->sandboxes[i];
            before = s->created_at;
            if (!s->id || !*s->id || strlen(s->id) >= SBX_ID_MAX)
                continue;
            sbx_kv_v1 *kv = calloc(s->n_tags ? s->n_tags : 1, sizeof *kv);
            if (!kv) {
                rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
                break;
            }
            size_t nk = 0;
            for (size_t t = 0; t < s->n_tags; t++)
                if (s->tags[t]->tag_name)
                    kv[nk++] = (sbx_kv_v1){s->tags[t]->tag_name,
                                           s->tags[t]->tag_value ? s->tags[t]->tag_value : ""};
            uint64_t created = s->created_at > 0 ? (uint64_t)(s->created_at * 1e9) : 0;
            rc = cb(ud, s->id, kv, nk, created);
            free(kv);
        }
        modal__client__sandbox_list_response__free_unpacked(ans, NULL);
    }
    free(tags);
    free(tp);
    free(app);
    return rc;
}

int modal_health(struct modal_prov *p)
{
    /* A fresh token: the service is reachable and takes the credentials. */
    return fetch_token(p, "health");
}
