/* plugins/docker/docker-limits.c - did the daemon apply the limits?
 *
 * Rootless Podman on cgroup v1 has no cgroup it may write to, so it
 * creates the container without its memory, pids and CPU limits and says
 * so only in its own log ("Resource limits are not supported and ignored
 * on cgroups V1 rootless systems"): the create answer has no warning, and
 * the compatible GET /info still claims MemoryLimit and PidsLimit.  So on
 * Podman the provider reads the created container back (one inspect,
 * a few ms, before the start) and compares.  A limit the daemon dropped
 * refuses the sandbox with an error naming the limits and why, unless
 * unenforced_limits allows running without them (the core's decision:
 * host->limits_unenforced; then a warning, and each result says so).
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "docker-int.h"
#include "unenforced.h"

/* Appends ", NAME (VALUE)" for each limit @hc lacks; the number of them,
 * and in *bits the sandbox limits they are (cpus: the CPU limit's). */
static int dropped(json_t *hc, const sbx_limits_v1 *l, int64_t nano_cpus, char *out, size_t cap,
                   uint64_t *bits)
{
    static const uint64_t bit[] = {SBX_LIMIT_BIT_MEMORY, SBX_LIMIT_BIT_PIDS, SBX_LIMIT_BIT_CPU};
    int n = 0;
    size_t o = 0;
    out[0] = '\0';
    *bits = 0;
    struct {
        const char *key, *name;
        int64_t want;
        char text[40];
    } lim[] = {
        {"Memory", "memory", (int64_t)l->memory_bytes, ""},
        {"PidsLimit", "pids", (int64_t)l->pids, ""},
        {"NanoCpus", "cpus", nano_cpus, ""},
    };
    snprintf(lim[0].text, sizeof lim[0].text, "%" PRIu64 " MiB", l->memory_bytes >> 20);
    snprintf(lim[1].text, sizeof lim[1].text, "%" PRIu64, l->pids);
    snprintf(lim[2].text, sizeof lim[2].text, "%.2f", (double)nano_cpus / 1e9);
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        if (lim[i].want <= 0)
            continue; /* not asked for */
        json_t *v = json_object_get(hc, lim[i].key);
        if (json_is_integer(v) && json_integer_value(v) == lim[i].want)
            continue;
        *bits |= bit[i];
        int w = snprintf(out + o, cap - o, "%s%s (%s)", n ? ", " : "", lim[i].name, lim[i].text);
        if (w > 0 && (size_t)w < cap - o)
            o += (size_t)w;
        n++;
    }
    return n;
}

/* Why, as Podman's own GET /libpod/info tells it (versioned: unlike
 * /libpod/_ping it is 404 without a version) (the failure path only:
 * it takes a third of a second). */
static void podman_why(struct dk_prov *p, char *why, size_t cap, bool *rootless_v1)
{
    char err[PH_ERR_MAX];
    json_t *ans = NULL;
    long st = 0;
    *rootless_v1 = false;
    snprintf(why, cap, "the daemon dropped them");
    if (dk_json(&p->eng, "GET", "/v4.0.0/libpod/info", NULL, 10000, &st, &ans, err)) {
        json_decref(ans);
        return;
    }
    json_t *host = json_object_get(ans, "host");
    bool rootless = json_is_true(json_object_get(json_object_get(host, "security"), "rootless"));
    const char *cg = json_string_value(json_object_get(host, "cgroupVersion"));
    *rootless_v1 = rootless && cg && !strcmp(cg, "v1");
    if (*rootless_v1)
        snprintf(why, cap, "rootless Podman on cgroup v1 cannot apply memory, pids or CPU limits "
                 "(cgroup v1 has no delegation to an unprivileged user, so Podman ignores them)");
    else
        snprintf(why, cap, "the daemon dropped them (Podman %s, cgroup %s)",
                 rootless ? "rootless" : "rootful", cg ? cg : "?");
    json_decref(ans);
}

int dk_limits_check(struct dk_prov *p, const char *id, const sbx_limits_v1 *l)
{
    char path[200], err[PH_ERR_MAX], lost[200], why[300];
    json_t *ans = NULL;
    long st = 0;
    snprintf(path, sizeof path, DK_API "/containers/%s/json", id);
    int ret = dk_json(&p->eng, "GET", path, NULL, 10000, &st, &ans, err);
    if (ret) {
        json_decref(ans);
        return dk_err(&p->eng, ret, "inspecting the new container %s: %s", id, err);
    }
    uint64_t bits;
    int n = dropped(json_object_get(ans, "HostConfig"), l, p->nano_cpus, lost, sizeof lost,
                    &bits);
    json_decref(ans);
    if (!n)
        return SBX_OK;
    /* The core decides (unenforced_limits, ABI 1.5); for an older core,
     * which cannot be told, our own setting does. */
    snprintf(why, sizeof why, "the daemon at %s created the container without them "
             "(polysandbox doctor says why)", p->eng.socket);
    if (pc_limits_unenforced(p->eng.host, p->eng.h, bits, why) == SBX_OK ||
        (p->allow_unenforced && (p->eng.host->struct_size < offsetof(sbx_host_v1,
                                 limits_unenforced) + sizeof p->eng.host->limits_unenforced ||
                                 !p->eng.host->limits_unenforced))) {
        /* Not why: that costs a third of a second per process, and
         * doctor says it. */
        p->eng.host->log(p->eng.h, SBX_LOG_WARNING, "sandbox %s runs without the %s limit%s it was "
                     "asked for: the daemon did not apply %s (unenforced_limits = allow in "
                     "providers.d/docker.ini; polysandbox doctor says why)", id, lost,
                     n > 1 ? "s" : "", n > 1 ? "them" : "it");
        return SBX_OK;
    }
    bool rootless_v1;
    podman_why(p, why, sizeof why, &rootless_v1);
    return dk_err(&p->eng, SBX_E_PERM,
                  "the daemon at %s did not apply the %s limit%s: %s.  No sandbox "
                  "was started.  Run Podman as root%s, or set unenforced_limits = allow in "
                  "providers.d/docker.ini to run sandboxes without these limits", p->eng.socket,
                  lost, n > 1 ? "s" : "", why,
                  rootless_v1 ? ", or rootless on cgroup v2 with the memory, pids and cpu "
                                "controllers delegated" : "");
}

bool dk_limits_unenforceable(struct dk_prov *p, char *detail, size_t cap)
{
    bool rootless_v1;
    podman_why(p, detail, cap, &rootless_v1);
    return rootless_v1;
}
