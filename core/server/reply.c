/* core/server/reply.c - replies and the one error shape
 *
 * Every error a route answers is {"error":{"code","message","provider"}}
 * with the HTTP status that fits; library errors map through one table
 * (srv_status_of) so every route says the same for the same failure.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "server.h"

void srv_reply(srv_req *r, unsigned status, const char *content_type, char *body, size_t len)
{
    struct MHD_Response *resp;

    if (body)
        resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    else
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return;   /* libmicrohttpd then closes the connection */
    }
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (r->idem_note)
        srv_idem_note(r, status, content_type, body ? body : "", body ? len : 0);
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->status = status;
}

void srv_reply_static(srv_req *r, unsigned status, const char *content_type, const void *body,
                      size_t len)
{
    struct MHD_Response *resp;

    resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return;   /* libmicrohttpd then closes the connection */
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->status = status;
}

void srv_reply_json(srv_req *r, unsigned status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    size_t len;

    json_decref(j);
    if (!text) {
        static const char oom[] = "{\"error\":{\"code\":\"nomem\",\"message\":\"out of "
                                  "memory\",\"provider\":null}}";
        if ((text = strdup(oom)))
            status = 500;
    }
    len = text ? strlen(text) : 0;
    srv_reply(r, status, "application/json", text, len);
}

void srv_reply_header(srv_req *r, const char *name, const char *value)
{
    if (r->resp)
        MHD_add_response_header(r->resp, name, value);
    /* a replay of an Idempotency-Key says where the thing made is too */
    if (r->idem_note && !strcasecmp(name, "Location"))
        srv_idem_note_location(r, value);
}

/* The request's bytes quoted in a message or naming a provider (a path,
 * a query argument) need not be UTF-8: JSON's strings must, so they are
 * made so rather than failing the reply. */
json_t *srv_error_json(const char *code, const char *provider, const char *message)
{
    return json_pack("{s:{s:s, s:o, s:o?}}", "error", "code", code, "message",
                     srv_json_text(message, strlen(message)), "provider",
                     provider ? srv_json_text(provider, strlen(provider)) : NULL);
}

void srv_error(srv_req *r, unsigned status, const char *code, const char *provider,
               const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int n = r->err_prefix ? snprintf(msg, sizeof msg, "%s", r->err_prefix) : 0;

    if (n < 0 || (size_t)n >= sizeof msg / 2)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    r->err_code = code;
    free(r->err_message);
    r->err_message = strdup(msg);
    if (status >= 500)
        srv_log(r, "%u %s: %s", status, code, msg);
    /* After a WebSocket upgrade the reply went out: the session tells it. */
    if (!r->upgraded)
        srv_reply_json(r, status, srv_error_json(code, provider, msg));
}

static const struct {
    int rc;
    unsigned status;      /* 0: the caller's not_found status */
    const char *code;
} status_map[] = {
    { SBX_E_NOMEM, 500, "nomem" },
    { SBX_E_INVAL, 400, "invalid" },
    { SBX_E_CONFIG, 500, "config" },
    { SBX_E_NOTSUP, 422, "not_supported" },
    { SBX_E_DECLINED, 422, "declined" },
    { SBX_E_NOT_FOUND, 0, "not_found" },
    { SBX_E_PROVIDER_UNAVAILABLE, 503, "provider_unavailable" },
    { SBX_E_BACKEND, 502, "backend" },
    { SBX_E_AUTH, 502, "backend_auth" },
    { SBX_E_TIMEOUT, 504, "backend_timeout" },
    { SBX_E_IO, 500, "io" },
    { SBX_E_LIMIT, 422, "limit" },
    { SBX_E_BUSY, 503, "busy" },
    { SBX_E_NETWORK, 502, "backend_network" },
    { SBX_E_RATE_LIMITED, 503, "backend_rate_limited" },
    { SBX_E_PERM, 500, "permission" },
    { SBX_E_EXISTS, 409, "exists" },
    { SBX_E_INTERNAL, 500, "internal" },
    { SBX_E_PATH, 400, "path" },
    { SBX_E_SERVER, 502, "backend_server" },
};

unsigned srv_status_of(int rc, unsigned not_found, const char **code)
{
    for (size_t i = 0; i < sizeof status_map / sizeof status_map[0]; i++) {
        if (status_map[i].rc != rc)
            continue;
        *code = status_map[i].code;
        return status_map[i].status ? status_map[i].status : not_found;
    }
    /* The loader's refusals: the provider cannot be used. */
    *code = "provider_unavailable";
    return 503;
}

const char *srv_lib_message(srv *s, int rc)
{
    const sbx_error *e = sbx_ctx_last_error(s->ctx);
    const char *msg = sbx_error_code(e) != SBX_OK ? sbx_error_message(e) : NULL;

    return msg && *msg ? msg : sbx_strerror(rc);
}

void srv_error_lib(srv_req *r, int rc, unsigned not_found)
{
    const sbx_error *e = sbx_ctx_last_error(r->s->ctx);
    const char *code;
    unsigned status = srv_status_of(rc, not_found, &code);

    srv_error(r, status, code, sbx_error_code(e) != SBX_OK ? sbx_error_provider(e) : NULL,
              "%s", srv_lib_message(r->s, rc));
}
