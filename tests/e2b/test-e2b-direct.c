/* tests/e2b/test-e2b-direct.c - the e2b module driven through its ops
 * table on the SDK's test host, against the E2B fake: what the core does
 * not reach yet (list with a label filter, through pages), and the API
 * key never showing in an error or a log line.
 *
 * Usage: test-e2b-direct MODULE BASE_URL API_KEY.  Prints TAP.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider-test.h>

#include "../unit/tap.h"

static sbx_test_host *t;

/* The last error the module set ("" when none). */
static const char *last_error(void)
{
    const char *msg = "";

    sbx_test_host_error(t, &msg);
    return msg;
}

/* A check that shows the module's last error when it fails. */
static void check(int cond, const char *what)
{
    if (!ok(cond, "%s", what))
        diag("last error: %s", last_error());
}

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
    tap_plan(11);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const sbx_provider_v1 *d = lib ? dlsym(lib, "sandbox_provider_v1") : NULL;
    if (!d) {
        printf("Bail out! %s\n", dlerror());
        return 1;
    }
    /* The SDK's test host, as providers.d/e2b.ini and the sealed store
     * would set it. */
    if (!(t = sbx_test_host_new(d)) || sbx_test_host_set(t, "api_url", argv[2]) ||
        sbx_test_host_set(t, "envd_url", argv[2]) ||
        sbx_test_host_set(t, "request_timeout", "20s") ||
        sbx_test_host_set(t, "api_key", argv[3]) ||
        sbx_test_host_set_state_dir(t, "/nonexistent")) {
        printf("Bail out! no test host: %s\n", t ? last_error() : "out of memory");
        return 1;
    }
    void *prov = NULL;
    int rc = d->ops->init(sbx_test_host_table(t), sbx_test_host_handle(t), &prov);
    check(rc == SBX_OK, "init");
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
    check(made == 5, "create 5 labelled sandboxes");

    sbx_kv_v1 filter[] = {{"team name", "blue & red=1"}, {"n", "x"}};
    struct seen s = {0};
    rc = d->ops->list(prov, filter, 2, on_list, &s);
    int all_right = s.n == 3;
    for (int i = 0; i < s.n; i++)
        all_right = all_right && (!strcmp(s.ids[i], id[0]) || !strcmp(s.ids[i], id[2]) ||
                                  !strcmp(s.ids[i], id[4]));
    check(rc == SBX_OK && all_right, "list with a filter (spaces, & and = in it): exactly the 3, "
       "over pages of 2");
    check(s.has_team == 3, "list: each with its labels");

    struct seen all = {0};
    rc = d->ops->list(prov, NULL, 0, on_list, &all);
    check(rc == SBX_OK && all.n == 5, "list without a filter: all 5");

    int calls = 0;
    rc = d->ops->list(prov, NULL, 0, stop_at_first, &calls);
    check(rc == 77 && calls == 1, "a callback's non-zero return stops the walk and is returned");

    for (int i = 0; i < 5; i++)
        if (sb[i])
            d->ops->destroy(prov, sb[i]);
    struct seen after = {0};
    rc = d->ops->list(prov, filter, 2, on_list, &after);
    check(rc == SBX_OK && after.n == 0, "destroyed: none listed");

    void *nosb = NULL;
    rc = d->ops->attach(prov, "inosuchsandbox0000000", &nosb);
    check(rc == SBX_E_NOT_FOUND && strstr(last_error(), "inosuchsandbox"),
       "attach of an unknown id: SBX_E_NOT_FOUND naming it");

    sbx_test_host_set(t, "api_key", "sekrit-key-value");
    rc = d->ops->list(prov, NULL, 0, on_list, &all);
    check(rc == SBX_E_AUTH && !strstr(last_error(), "sekrit"),
       "a refused key: SBX_E_AUTH, and the key is not in the message");

    d->ops->fini(prov);
    const char *what = NULL;
    check(sbx_test_host_leaks(t, &what) == 0, "no credential in any log line or error");
    if (*what)
        printf("# %s\n", what);
    check(sbx_test_host_misuses(t, &what) == 0, "no misuse of the host table");
    if (*what)
        printf("# %s\n", what);
    sbx_test_host_free(t);
    return tap_done();
}
