/* plugins/modal/modal-router.c - the task command router
 *
 * Each running task has a router of its own: TaskGetCommandRouterAccess
 * names its URL (https only) and a JWT, sent as "authorization: Bearer".
 * The JWT is short-lived: a call refused as unauthenticated renews it and
 * is made once more, as Modal's SDKs do.  A task without a router
 * (FAILED_PRECONDITION) is marked legacy: its commands go through the
 * control plane.  When the control plane itself is plain HTTP (a local
 * server), the router is reached in plain HTTP/2 too, as the SDKs do for a
 * local server.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modal-int.h"

#define SVC "/modal.task_command_router.TaskCommandRouter/"

/* Asks for the router's address and a JWT; *legacy when there is none. */
static int access_get(struct modal_prov *p, struct modal_sb *sb, bool *legacy)
{
    char what[SBX_ID_MAX + 48];
    snprintf(what, sizeof what, "sandbox %s: command router", sb->id);
    *legacy = false;
    Modal__Client__TaskGetCommandRouterAccessRequest req =
        MODAL__CLIENT__TASK_GET_COMMAND_ROUTER_ACCESS_REQUEST__INIT;
    req.task_id = sb->task_id;
    Modal__Client__TaskGetCommandRouterAccessResponse *ans = NULL;
    pthread_mutex_lock(&sb->lock);
    bool reached = sb->router != NULL;
    pthread_mutex_unlock(&sb->lock);
    int quiet = p->exec_path == MODAL_EXEC_AUTO && !reached ? MG_FAILED_PRECONDITION : -1;
    mg_status st;
    int rc = modal_api_st(p, sb, what, "TaskGetCommandRouterAccess", &req.base,
                          &modal__client__task_get_command_router_access_response__descriptor,
                          (ProtobufCMessage **)&ans, 0, quiet, &st);
    if (rc && quiet >= 0 && st.code == quiet) {
        *legacy = true;
        return SBX_OK;
    }
    if (rc)
        return rc;
    const char *url = ans->url ? ans->url : "";
    if (strncmp(url, "https://", 8) || strpbrk(url, " \r\n") || !ans->jwt || !*ans->jwt ||
        strpbrk(ans->jwt, "\r\n")) {
        modal__client__task_get_command_router_access_response__free_unpacked(ans, NULL);
        return p->host->set_error(p->h, SBX_E_BACKEND, "Modal: %s: the access answered is not "
                                  "an https:// URL and a token", what);
    }
    char *jwt = strdup(ans->jwt), *u = NULL;
    if (p->plain_router)
        u = asprintf(&u, "http://%s", url + 8) < 0 ? NULL : u;
    else
        u = strdup(url);
    explicit_bzero(ans->jwt, strlen(ans->jwt));
    modal__client__task_get_command_router_access_response__free_unpacked(ans, NULL);
    if (!jwt || !u) {
        modal_wipe_free(jwt);
        free(u);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    pthread_mutex_lock(&sb->lock);
    bool moved = sb->router && sb->router_url && strcmp(sb->router_url, u);
    ph_client *fresh = NULL;
    char err[PH_ERR_MAX] = "";
    if (!sb->router || moved) {
        ph_client_conf conf = {
            .base_url = u, .ca_file = p->ca_file,
            .connect_timeout_ms = p->connect_timeout_ms, .timeout_ms = p->request_timeout_ms,
            .http2 = 1,
        };
        rc = ph_client_new(&conf, &fresh, err);
    }
    if (!rc) {
        if (moved) {
            /* The task moved to another router: go there.  The old client
             * may be in use by the other stream: it is freed with the
             * handle. */
            p->host->log(p->h, SBX_LOG_INFO, "sandbox %s: the command router moved", sb->id);
            ph_client_free(sb->old_router);
            sb->old_router = sb->router;
        }
        if (fresh)
            sb->router = fresh;
        free(sb->router_url);
        sb->router_url = u;
        modal_wipe_free(sb->jwt);
        sb->jwt = jwt;
        sb->jwt_exp = modal_jwt_exp(jwt);
    }
    pthread_mutex_unlock(&sb->lock);
    if (rc) {
        modal_wipe_free(jwt);
        free(u);
        return p->host->set_error(p->h, rc, "Modal: %s: %s", what, err);
    }
    /* cppcheck-suppress memleak ; jwt and u are now owned by sb */
    return SBX_OK;
}

int modal_router_open(struct modal_prov *p, struct modal_sb *sb)
{
    if (sb->router || sb->legacy)
        return SBX_OK;
    if (p->exec_path == MODAL_EXEC_LEGACY) {
        sb->legacy = true;
        return SBX_OK;
    }
    bool legacy = false;
    int rc = access_get(p, sb, &legacy);
    if (!rc && legacy) {
        p->host->log(p->h, SBX_LOG_INFO, "sandbox %s: no command router; commands go through "
                     "the control plane", sb->id);
        sb->legacy = true;
    }
    return rc;
}

/* One call with the current token; *sent gets that token's expiry, to
 * tell whether another thread has renewed it since. */
static int call_once(struct modal_prov *p, struct modal_sb *sb, const char *path,
                     const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                     ProtobufCMessage **reply, long timeout_ms,
                     int (*on_message)(void *, const uint8_t *, size_t), void *ud,
                     mg_status *st, char err[PH_ERR_MAX], char **sent)
{
    char *auth = NULL;
    pthread_mutex_lock(&sb->lock);
    ph_client *router = sb->router;
    if (asprintf(&auth, "authorization: Bearer %s", sb->jwt) < 0)
        auth = NULL;
    if (sent)
        *sent = auth && sb->jwt ? strdup(sb->jwt) : NULL;
    pthread_mutex_unlock(&sb->lock);
    if (!auth) {
        snprintf(err, PH_ERR_MAX, "%s: out of memory", path);
        st->code = -1;
        return SBX_E_NOMEM;
    }
    const char *lines[] = {auth, NULL};
    mg_call call = {.path = path, .headers = lines, .request = req,
                    .timeout_ms = timeout_ms > 0 ? timeout_ms : p->request_timeout_ms,
                    .on_message = on_message, .ud = ud};
    int rc = mg_call_do(router, &call, reply_desc, reply, st, err);
    modal_wipe_free(auth);
    return rc;
}

static int call(struct modal_prov *p, struct modal_sb *sb, const char *method,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                ProtobufCMessage **reply, long timeout_ms,
                int (*on_message)(void *, const uint8_t *, size_t), void *ud, mg_status *st,
                char err[PH_ERR_MAX])
{
    char path[128];
    snprintf(path, sizeof path, SVC "%s", method);
    char *sent = NULL;
    int rc = call_once(p, sb, path, req, reply_desc, reply, timeout_ms, on_message, ud, st, err,
                       &sent);
    if (rc && st->code == MG_UNAUTHENTICATED) {
        bool legacy = false;
        pthread_mutex_lock(&sb->lock);
        bool renewed = !sent || !sb->jwt || strcmp(sent, sb->jwt);
        pthread_mutex_unlock(&sb->lock);
        p->host->log(p->h, SBX_LOG_DEBUG, "sandbox %s: router token refused, %s", sb->id,
                     renewed ? "renewed already" : "renewing it");
        int r2 = renewed ? SBX_OK : access_get(p, sb, &legacy);
        if (!r2 && legacy)
            r2 = p->host->set_error(p->h, SBX_E_BACKEND, "Modal: sandbox %s: the command "
                                    "router went away", sb->id);
        if (r2) {
            snprintf(err, PH_ERR_MAX, "%s: the router token was refused and could not be "
                     "renewed", path);
            st->code = -2; /* the error is set already */
            modal_wipe_free(sent);
            return r2;
        }
        rc = call_once(p, sb, path, req, reply_desc, reply, timeout_ms, on_message, ud, st, err,
                       NULL);
    }
    modal_wipe_free(sent);
    return rc;
}

int modal_router(struct modal_prov *p, struct modal_sb *sb, const char *what, const char *method,
                 const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                 ProtobufCMessage **reply, long timeout_ms, mg_status *st, char err[PH_ERR_MAX])
{
    (void)what;
    return call(p, sb, method, req, reply_desc, reply, timeout_ms, NULL, NULL, st, err);
}

int modal_router_stream(struct modal_prov *p, struct modal_sb *sb, const char *method,
                        const ProtobufCMessage *req, long timeout_ms,
                        int (*on_message)(void *ud, const uint8_t *msg, size_t len), void *ud,
                        mg_status *st, char err[PH_ERR_MAX])
{
    return call(p, sb, method, req, NULL, NULL, timeout_ms, on_message, ud, st, err);
}
