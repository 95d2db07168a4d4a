/* plugins/e2b/e2b-envd.c - the address of a sandbox's envd, its headers,
 * and unary Connect RPCs (JSON)
 *
 * envd lives in the sandbox on port 49983.  On E2B's own domains it is
 * reached through https://sandbox.<domain> with the headers
 * E2b-Sandbox-Id and E2b-Sandbox-Port; elsewhere at
 * https://49983-<id>.<domain>.  The envd_url setting overrides the
 * address (a fake, a proxy); the routing headers are sent either way.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b-int.h"

static const char *const routed_domains[] = {
    "e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev", NULL,
};

/* envd >= 0.5.7 takes an application/octet-stream upload body. */
static bool version_at_least(const char *v, int maj, int min, int pat)
{
    int a = 0, b = 0, c = 0;
    if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2)
        return false;
    if (a != maj)
        return a > maj;
    if (b != min)
        return b > min;
    return c >= pat;
}

static int add_header(struct e2b_prov *p, ph_client *c, const char *name, const char *value)
{
    if (ph_client_set_header(c, name, value))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

int e2b_envd_client(struct e2b_prov *p, struct e2b_sb *sb, const char *token,
                    const char *domain, const char *version)
{
    char *url = NULL, err[PH_ERR_MAX] = "", port[16];
    const char *dom = domain && *domain ? domain : p->domain;
    int rc;

    if (p->envd_url) {
        url = strdup(p->envd_url);
    } else {
        bool routed = false;
        for (size_t i = 0; routed_domains[i]; i++)
            routed = routed || !strcmp(dom, routed_domains[i]);
        if (routed ? asprintf(&url, "https://sandbox.%s", dom) < 0
                   : asprintf(&url, "https://%d-%s.%s", E2B_ENVD_PORT, sb->id, dom) < 0)
            url = NULL;
    }
    if (!url)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    ph_client_conf conf = {
        .base_url = url,
        .ca_file = p->ca_file,
        .connect_timeout_ms = p->connect_timeout_ms,
    };
    rc = ph_client_new(&conf, &sb->envd, err);
    free(url);
    if (rc)
        return p->host->set_error(p->h, rc, "envd of sandbox %s: %s", sb->id, err);
    snprintf(port, sizeof port, "%d", E2B_ENVD_PORT);
    if ((rc = add_header(p, sb->envd, "E2b-Sandbox-Id", sb->id)) ||
        (rc = add_header(p, sb->envd, "E2b-Sandbox-Port", port)) ||
        (rc = add_header(p, sb->envd, "Connect-Protocol-Version", "1")))
        return rc;
    if (token && *token && (rc = add_header(p, sb->envd, "X-Access-Token", token)))
        return rc;
    if (ph_client_set_header(sb->envd, "Authorization", p->auth_basic))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    sb->octet_upload = version_at_least(version, 0, 5, 7);
    return SBX_OK;
}

int e2b_connect_code(const char *code)
{
    static const struct {
        const char *name;
        int code;
    } map[] = {
        {"invalid_argument", SBX_E_INVAL}, {"out_of_range", SBX_E_INVAL},
        {"deadline_exceeded", SBX_E_TIMEOUT}, {"not_found", SBX_E_NOT_FOUND},
        {"already_exists", SBX_E_EXISTS}, {"permission_denied", SBX_E_PERM},
        {"unauthenticated", SBX_E_AUTH}, {"resource_exhausted", SBX_E_RATE_LIMITED},
        {"unimplemented", SBX_E_NOTSUP}, {"unavailable", SBX_E_SERVER},
    };
    for (size_t i = 0; code && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(code, map[i].name))
            return map[i].code;
    return SBX_E_BACKEND; /* canceled, unknown, internal, aborted, data_loss, ... */
}

int e2b_rpc(struct e2b_prov *p, struct e2b_sb *sb, const char *method, json_t *req,
            long timeout_ms, int quiet, json_t **out)
{
    char err[PH_ERR_MAX] = "";
    long status = 0, ra = -1;
    json_t *ans = NULL;
    int rc = ph_json(sb->envd, "POST", method, req,
                     timeout_ms > 0 ? timeout_ms : p->request_timeout_ms, &status, &ra, &ans, err);
    if (out)
        *out = ans;
    else
        json_decref(ans);
    if (rc && quiet != -1 && rc != quiet) {
        if (status == 502)
            return p->host->set_error(p->h, rc, "sandbox %s: %s (the sandbox is not running: "
                                      "expired or killed?)", sb->id, err);
        if (ra >= 0)
            return p->host->set_error(p->h, rc, "sandbox %s: %s (retry after %ld s)", sb->id,
                                      err, (ra + 999) / 1000);
        return p->host->set_error(p->h, rc, "sandbox %s: %s", sb->id, err);
    }
    return rc;
}
