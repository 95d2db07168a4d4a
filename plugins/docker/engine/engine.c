/* plugins/docker/engine/engine.c - calls to the daemon: errors, JSON
 * requests, which daemon it is
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "engine/engine.h"

int dk_err(struct dk_engine *e, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return e->host->set_error(e->h, code, "%s", msg);
}

int dk_json(struct dk_engine *e, const char *method, const char *path, json_t *body,
            long timeout_ms, long *status, json_t **out, char err[PH_ERR_MAX])
{
    json_t *ans = NULL;
    int ret = ph_json(e->http, method, path, body, timeout_ms, status, NULL, &ans, err);
    if (out)
        *out = ans;
    else
        json_decref(ans);
    return ret;
}

/* Podman's own API answers beside the compatible one; Docker has no such
 * path (404).  Cheap, where Podman's GET /version takes half a second. */
int dk_probe(struct dk_engine *e)
{
    char err[PH_ERR_MAX];
    ph_request rq = {.method = "GET", .path = "/libpod/_ping", .timeout_ms = 30000};
    ph_response resp;
    int ret = ph_do(e->http, &rq, &resp, err);
    long st = resp.status;
    ph_response_clear(&resp);
    if (ret)
        return dk_err(e, ret, "daemon at %s: %s", e->socket, err);
    e->podman = st == 200;
    return SBX_OK;
}

uint64_t dk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
