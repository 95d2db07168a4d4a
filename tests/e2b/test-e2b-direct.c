/* tests/e2b/test-e2b-direct.c - the e2b module driven through its ops
 * table with a host table of our own, against the E2B fake: what the core
 * does not reach yet (list with a label filter, through pages), and the
 * API key never showing in an error.
 *
 * Usage: test-e2b-direct MODULE BASE_URL API_KEY.  Prints TAP.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>

#include "core-int.h"

static const char *base_url, *api_key;
static const sbx_provider_v1 *desc;     /* the module's, for its declared keys */
static char last_error[1024];
static int last_code;
static int n_test, failed;

static void ok(int cond, const char *what)
{
    n_test++;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", n_test, what);
    if (!cond) {
        failed = 1;
        printf("# last error (%d): %s\n", last_code, last_error);
    }
}

static void h_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    (void)h;
    (void)level;
    (void)fmt;
}

static int h_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;
    (void)h;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    last_code = code;
    return code;
}

static const char *h_config_get(sbx_host_handle *h, const char *key)
{
    (void)h;
    if (!strcmp(key, "api_url") || !strcmp(key, "envd_url"))
        return base_url;
    if (!strcmp(key, "request_timeout"))
        return "20s";
    return NULL;
}

static int h_secret_get(sbx_host_handle *h, const char *key, const char **out, size_t *len)
{
    (void)h;
    if (strcmp(key, "api_key"))
        return SBX_E_NOT_FOUND;
    *out = strdup(api_key);
    *len = strlen(api_key);
    return *out ? SBX_OK : SBX_E_NOMEM;
}

static void h_secret_release(sbx_host_handle *h, const char *v)
{
    (void)h;
    free((void *)v);
}

static void *h_alloc(size_t n) { return malloc(n ? n : 1); }
static void h_free(void *p) { free(p); }
static const char *h_state_dir(sbx_host_handle *h) { (void)h; return "/nonexistent"; }

/* As unenforced_limits = allow: E2B sizes sandboxes by template. */
static int h_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why)
{
    (void)h, (void)limits, (void)why;
    return SBX_OK;
}

/* The core's reader (core/host-settings.c) over h_config_get. */
static const core_setting *h_lookup(void *ud, const char *key)
{
    static core_setting s;
    const char *v = h_config_get(ud, key);

    s = (core_setting){ .key = (char *)key, .value = (char *)v, .file = "test", .line = 1 };
    return v ? &s : NULL;
}

static int h_settings_read(sbx_host_handle *h, const sbx_setting_v1 *t, size_t size, void *base)
{
    int rc = core_settings_read(desc->name, desc->config_keys, desc->secret_keys, h_lookup, h,
                                t, size, base);

    return rc ? h_set_error(h, rc, "%s", sbx_error_message(sbx_ctx_last_error(NULL))) : SBX_OK;
}

static const sbx_host_v1 host = {
    .struct_size = sizeof host, .abi_major = SBX_ABI_MAJOR, .abi_minor = SBX_ABI_MINOR,
    .log = h_log, .set_error = h_set_error, .config_get = h_config_get,
    .secret_get = h_secret_get, .secret_release = h_secret_release,
    .alloc = h_alloc, .free = h_free, .state_dir = h_state_dir,
    .limits_unenforced = h_limits_unenforced, .settings_read = h_settings_read,
};

struct seen {
    char ids[16][SBX_ID_MAX];
    int n, calls;
    int has_team;
};

static int on_list(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n, uint64_t created)
{
    struct seen *s = ud;
    s->calls++;
    if (s->n < 16)
        snprintf(s->ids[s->n++], SBX_ID_MAX, "%s", id);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(labels[i].key, "team name") && !strcmp(labels[i].value, "blue & red=1"))
            s->has_team++;
    (void)created;
    return 0;
}

static int stop_at_first(void *ud, const char *id, const sbx_kv_v1 *l, size_t n, uint64_t c)
{
    (void)id, (void)l, (void)n, (void)c;
    ++*(int *)ud;
    return 77;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test-e2b-direct MODULE BASE_URL API_KEY\n");
        return 2;
    }
    base_url = argv[2];
    api_key = argv[3];
    printf("1..9\n");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const sbx_provider_v1 *d = lib ? dlsym(lib, "sandbox_provider_v1") : NULL;
    if (!d) {
        printf("Bail out! %s\n", dlerror());
        return 1;
    }
    desc = d;
    void *prov = NULL;
    int rc = d->ops->init(&host, NULL, &prov);
    ok(rc == SBX_OK, "init");
    if (rc)
        return 1;

    /* Three sandboxes with the label (odd key and value), two without. */
    void *sb[5] = {0};
    char id[5][SBX_ID_MAX];
    int made = 0;
    for (int i = 0; i < 5; i++) {
        sbx_kv_v1 labels[] = {{"team name", i % 2 == 0 ? "blue & red=1" : "green"},
                              {"n", "x"}};
        sbx_create_spec_v1 spec = {.struct_size = sizeof spec, .labels = labels, .n_labels = 2,
                                   .ttl_ns = 60000000000ull};
        if (d->ops->create(prov, &spec, &sb[i], id[i]) == SBX_OK)
            made++;
    }
    ok(made == 5, "create 5 labelled sandboxes");

    sbx_kv_v1 filter[] = {{"team name", "blue & red=1"}, {"n", "x"}};
    struct seen s = {0};
    rc = d->ops->list(prov, filter, 2, on_list, &s);
    int all_right = s.n == 3;
    for (int i = 0; i < s.n; i++)
        all_right = all_right && (!strcmp(s.ids[i], id[0]) || !strcmp(s.ids[i], id[2]) ||
                                  !strcmp(s.ids[i], id[4]));
    ok(rc == SBX_OK && all_right, "list with a filter (spaces, & and = in it): exactly the 3, "
       "over pages of 2");
    ok(s.has_team == 3, "list: each with its labels");

    struct seen all = {0};
    rc = d->ops->list(prov, NULL, 0, on_list, &all);
    ok(rc == SBX_OK && all.n == 5, "list without a filter: all 5");

    int calls = 0;
    rc = d->ops->list(prov, NULL, 0, stop_at_first, &calls);
    ok(rc == 77 && calls == 1, "a callback's non-zero return stops the walk and is returned");

    for (int i = 0; i < 5; i++)
        if (sb[i])
            d->ops->destroy(prov, sb[i]);
    struct seen after = {0};
    rc = d->ops->list(prov, filter, 2, on_list, &after);
    ok(rc == SBX_OK && after.n == 0, "destroyed: none listed");

    void *nosb = NULL;
    rc = d->ops->attach(prov, "inosuchsandbox0000000", &nosb);
    ok(rc == SBX_E_NOT_FOUND && strstr(last_error, "inosuchsandbox"),
       "attach of an unknown id: SBX_E_NOT_FOUND naming it");

    api_key = "sekrit-key-value";
    rc = d->ops->list(prov, NULL, 0, on_list, &all);
    ok(rc == SBX_E_AUTH && !strstr(last_error, "sekrit"),
       "a refused key: SBX_E_AUTH, and the key is not in the message");

    d->ops->fini(prov);
    return failed;
}
