/* plugins/docker/docker-doctor.c - health and doctor: is the daemon
 * there, which one, can it apply the limits, is the default image there
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "docker-int.h"

int dk_health(void *prov)
{
    struct dk_prov *p = prov;
    char err[PH_ERR_MAX];
    ph_request rq = {.method = "GET", .path = "/_ping", .timeout_ms = 5000};
    ph_response resp;
    int ret = ph_do(p->eng.http, &rq, &resp, err);
    long st = resp.status;
    ph_response_clear(&resp);
    if (ret)
        return dk_err(&p->eng, ret, "docker daemon at %s: %s", p->eng.socket, err);
    if (st != 200)
        return dk_err(&p->eng, ph_status_code(st) ? ph_status_code(st) : SBX_E_BACKEND,
                      "docker daemon at %s answered %ld to /_ping", p->eng.socket, st);
    return SBX_OK;
}

void dk_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct dk_prov *p = prov;
    char detail[600], err[PH_ERR_MAX];
    json_t *ans = NULL;
    long status = 0;
    int ret = dk_json(&p->eng, "GET", "/version", NULL, 5000, &status, &ans, err);
    if (ret) {
        snprintf(detail, sizeof detail, "%s: %s", p->eng.socket, err);
        cb(ud, "daemon", 0, detail);
        json_decref(ans);
        return;
    }
    const char *ver = json_string_value(json_object_get(ans, "Version"));
    const char *api = json_string_value(json_object_get(ans, "ApiVersion"));
    snprintf(detail, sizeof detail, "%s: version %s, API %s (used: %s)", p->eng.socket,
             ver ? ver : "?", api ? api : "?", DK_API + 2);
    cb(ud, "daemon", 1, detail);
    json_decref(ans);
    ans = NULL;
    ret = dk_json(&p->eng, "GET", DK_API "/info", NULL, 5000, &status, &ans, err);
    if (!ret) {
        const char *cg = json_string_value(json_object_get(ans, "CgroupVersion"));
        snprintf(detail, sizeof detail, "cgroup v%s; memory limit %s, pids limit %s",
                 cg ? cg : "?", json_is_true(json_object_get(ans, "MemoryLimit")) ? "yes" : "no",
                 json_is_true(json_object_get(ans, "PidsLimit")) ? "yes" : "no");
        bool lim_ok = json_is_true(json_object_get(ans, "MemoryLimit")) &&
                      json_is_true(json_object_get(ans, "PidsLimit"));
        /* Rootless Podman on cgroup v1 claims both, and applies neither. */
        char why[300];
        if (dk_probe(&p->eng) == SBX_OK && p->eng.podman &&
            dk_limits_unenforceable(p, why, sizeof why)) {
            lim_ok = false;
            snprintf(detail, sizeof detail, "%s; sandboxes are refused unless unenforced_limits "
                     "allows them (polysandbox.ini(5))", why);
        }
        cb(ud, "limits", lim_ok, detail);
        if (p->runtime) {
            bool have = json_object_get(json_object_get(ans, "Runtimes"), p->runtime) != NULL;
            snprintf(detail, sizeof detail, "runtime '%s' %s", p->runtime,
                     have ? "is registered" : "is not registered in the daemon's daemon.json");
            cb(ud, "runtime", have, detail);
        }
    }
    json_decref(ans);
    cb(ud, "exec", 1, p->exec_attach && p->eng.podman
       ? "exec_mode = attach, but on Podman every exec is a daemon exec (Podman closes a "
         "container's stdin when an attach ends: see the provider's README)"
       : p->exec_attach
       ? "exec_mode = attach: new sandboxes serve execs through one attach connection"
       : "exec_mode = api: every exec is a daemon exec");
    if (p->image) {
        char path[600], alias[512];
        const char *img = dk_alias(p->aliases, p->image, alias, sizeof alias);
        char *esc = ph_escape(img);
        snprintf(path, sizeof path, DK_API "/images/%s/json", esc ? esc : "");
        free(esc);
        ans = NULL;
        ret = dk_json(&p->eng, "GET", path, NULL, 5000, &status, &ans, err);
        json_decref(ans);
        snprintf(detail, sizeof detail, "default image '%s' %s", img,
                 !ret ? "is there"
                 : p->pull.policy == DK_PULL_NEVER ? "is not on the daemon and pull = never "
                                                     "(docker pull or docker import it)"
                 : "is not on the daemon yet (the first create pulls it)");
        cb(ud, "image", !ret || p->pull.policy != DK_PULL_NEVER, detail);
    } else {
        cb(ud, "image", 0, "no default image: set image in providers.d/docker.ini");
    }
    snprintf(detail, sizeof detail, "pull = %s, pull_timeout %ld s%s%s%s",
             p->pull.policy == DK_PULL_ALWAYS ? "always" : p->pull.policy == DK_PULL_NEVER
             ? "never" : "missing", p->pull.timeout_ms / 1000,
             p->pull.auth_host ? ", registry_auth for " : "",
             p->pull.auth_host ? p->pull.auth_host : "",
             p->pull.auth_host ? " (set, not shown)" : "");
    cb(ud, "pull", 1, detail);
}
