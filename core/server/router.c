/* core/server/router.c - the route table and the route families
 *
 * Adding a route family (e.g. the Piston routes):
 *   1. core/server/compat-piston.c: a static const srv_route table and
 *      int srv_routes_piston(struct srv_router *r) { return
 *      srv_router_add(r, table, N); }; handlers take an srv_req and answer
 *      with srv_reply_json / srv_error / srv_sse_* (server.h).
 *   2. Declare srv_routes_piston in server.h and list it in families[]
 *      below with its [server] switch ("compat_piston"), which then exists
 *      in polysandbox.ini (document it in doc/polysandbox.ini.5).
 *   3. Add the file to core/server/local.mk, its paths to
 *      core/server/openapi.json, its routes to doc/polysandboxd.8.
 * Handlers flagged SRV_R_WORKER run in the worker pool (anything that
 * calls into sandboxes); the others run on the network thread and must
 * not block.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "server.h"

struct srv_router {
    const srv_route **routes;
    size_t n, cap;
};

static const struct family {
    const char *name;
    const char *key;     /* the [server] switch, NULL: always on */
    int (*reg)(struct srv_router *r);
} families[] = {
    { "run", NULL, srv_routes_run },
    { "sandboxes", NULL, srv_routes_sandboxes },
    { "sandboxes_ws", NULL, srv_routes_sandboxes_ws },
    { "info", NULL, srv_routes_info },
    { "ops", NULL, srv_routes_ops },
    { "web", "web", srv_routes_web },
    { "jobs", NULL, srv_routes_jobs },
    { "piston", "compat_piston", srv_routes_piston },
    { "sandboxfusion", "compat_sandboxfusion", srv_routes_fusion },
    { "seed", "compat_seed", srv_routes_seed },
    { "judge0", "compat_judge0", srv_routes_judge0 },
};
#define N_FAMILIES (sizeof families / sizeof families[0])

size_t srv_family_count(void) { return N_FAMILIES; }
const char *srv_family_name(size_t i) { return i < N_FAMILIES ? families[i].name : NULL; }
const char *srv_family_key(size_t i) { return i < N_FAMILIES ? families[i].key : NULL; }

struct srv_router *srv_router_new(void)
{
    return calloc(1, sizeof(struct srv_router));
}

void srv_router_free(struct srv_router *r)
{
    if (!r)
        return;
    free(r->routes);
    free(r);
}

int srv_router_add(struct srv_router *r, const srv_route *routes, size_t n)
{
    if (r->n + n > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        while (cap < r->n + n)
            cap *= 2;
        const srv_route **v = realloc(r->routes, cap * sizeof *v);
        if (!v)
            return -1;
        r->routes = v;
        r->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        r->routes[r->n++] = &routes[i];
    return 0;
}

int srv_router_register(srv *s)
{
    for (size_t i = 0; i < N_FAMILIES; i++) {
        if (families[i].key && !srv_conf_family_on(&s->conf, families[i].key))
            continue;
        if (families[i].reg && families[i].reg(s->router) != 0)
            return -1;
    }
    return 0;
}

size_t srv_router_count(const struct srv_router *r) { return r->n; }
const srv_route *srv_router_at(const struct srv_router *r, size_t i)
{
    return i < r->n ? r->routes[i] : NULL;
}

/* Match @path against @pattern; captures go to params/names from *n. */
static bool match(const char *pattern, const char *path, char **params, const char **names,
                  size_t *n)
{
    size_t n0 = *n;
    const char *p = pattern, *u = path;

    while (*p && *u) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            bool rest = close && close > p + 1 && close[-1] == '*';
            size_t len = rest ? strlen(u) : strcspn(u, "/");
            if (!close || len == 0 || *n >= SRV_MAX_PARAMS)
                goto fail;
            if (!(params[*n] = strndup(u, len)))
                goto fail;
            names[(*n)++] = p + 1;   /* "name}" or "name*}": compared up to '}' or '*' */
            p = close + 1;
            u += len;
            continue;
        }
        if (*p != *u)
            goto fail;
        p++;
        u++;
    }
    if (*p == '\0' && *u == '\0')
        return true;
fail:
    while (*n > n0)
        free(params[--*n]);
    return false;
}

const srv_route *srv_router_match(const struct srv_router *r, unsigned method,
                                  const char *path, unsigned *allowed, char **params,
                                  const char **names, size_t *n_params)
{
    const srv_route *found = NULL;
    unsigned want = method == SRV_HEAD ? SRV_GET : method;

    *allowed = 0;
    *n_params = 0;
    for (size_t i = 0; i < r->n; i++) {
        const srv_route *rt = r->routes[i];
        size_t n = *n_params;
        if (!match(rt->pattern, path, params, names, &n))
            continue;
        *allowed |= rt->methods;
        if (!found && (rt->methods & want)) {
            found = rt;
            *n_params = n;
            continue;
        }
        while (n > *n_params)
            free(params[--n]);
    }
    return found;
}
