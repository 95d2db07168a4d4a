/* example.c - the smallest useful PolySandbox provider
 *
 * Builds out of tree with nothing but the SDK header:
 *
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags polysandbox-provider) -o example.so example.c
 *
 * Every exec writes "hello from example\n" to stdout and exits 0.  It
 * isolates nothing: it shows the shape of a provider, not a sandbox.
 * Without SBX_CAP_NETWORK_POLICY, network = none (the default) is refused
 * by the core unless unenforced_limits allows "network".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <polysandbox/provider.h>

/* What init returns: handed back to every op as `prov`. */
struct example {
    const sbx_host_v1 *host;  /* (transfer none) valid until fini */
    sbx_host_handle *h;       /* for host calls */
    atomic_ulong next_id;     /* ops may run on several threads at once */
};

/* One sandbox: create allocates it, destroy frees it. */
struct example_sandbox {
    unsigned long id;
};

static int example_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct example *ex = calloc(1, sizeof *ex);

    if (!ex)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    ex->host = host;
    ex->h = h;
    host->log(h, SBX_LOG_DEBUG, "example provider ready");
    *prov = ex;
    return SBX_OK;
}

static void example_fini(void *prov)
{
    free(prov);
}

static int example_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                          char id[SBX_ID_MAX])
{
    struct example *ex = prov;
    struct example_sandbox *s = malloc(sizeof *s);

    (void)spec; /* limits, template, env: a real provider honours them */
    if (!s)
        return ex->host->set_error(ex->h, SBX_E_NOMEM, "out of memory");
    s->id = atomic_fetch_add(&ex->next_id, 1) + 1;
    snprintf(id, SBX_ID_MAX, "example-%lu", s->id);
    *sb = s;
    return SBX_OK;
}

static int example_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                        const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    static const char hello[] = "hello from example\n";
    size_t len = sizeof hello - 1;

    (void)prov;
    (void)sb;
    /* Deliver at most the cap; past it the command would be killed. */
    if (len > spec->stdout_cap) {
        len = (size_t)spec->stdout_cap;
        out->stdout_truncated = 1;
    }
    if (sink->write(sink->ud, SBX_STREAM_STDOUT, hello, len) != 0 ||
        out->stdout_truncated) {
        out->status = SBX_RUN_OUTPUT_LIMIT;
        return SBX_OK;
    }
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int example_destroy(void *prov, void *sb)
{
    (void)prov;
    free(sb);
    return SBX_OK;
}

static const sbx_provider_ops_v1 example_ops = {
    .init = example_init,
    .fini = example_fini,
    .create = example_create,
    .exec = example_exec,
    .destroy = example_destroy,
    /* Optional ops left NULL: the core answers SBX_E_NOTSUP for them. */
};

SBX_PROVIDER_DEFINE("example", "0.1.0",
                    "example provider: says hello, isolates nothing",
                    "MIT", 0 /* no capabilities */, NULL, NULL, &example_ops);
