/* tests/provider/testprov.c - the reference test provider's skeleton: the
 * state, init and fini, the one-sandbox ops and small helpers that every
 * flavour shares (see testprov.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testprov.h"

int tp_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct tp *t = calloc(1, sizeof *t);
    int rc;

    if (!t)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    t->host = host;
    t->h = h;
    atomic_init(&t->creates, 0);
    rc = tp_setup(t);
    if (rc != SBX_OK) {
        tp_teardown(t);
        free(t);
        return rc;
    }
    *prov = t;
    return SBX_OK;
}

void tp_fini(void *prov)
{
    tp_teardown(prov);
    free(prov);
}

int tp_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX])
{
    struct tp *t = prov;

    (void)spec;
    atomic_fetch_add(&t->creates, 1);
    *sb = t;
    snprintf(id, SBX_ID_MAX, "%s-1", TP_NAME);
    return SBX_OK;
}

int tp_attach(void *prov, const char *id, void **sb)
{
    struct tp *t = prov;

    if (strcmp(id, TP_NAME "-1"))
        return t->host->set_error(t->h, SBX_E_NOT_FOUND, "no sandbox '%s'", id);
    *sb = t;
    return SBX_OK;
}

void tp_release(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
}

int tp_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

int tp_setting_num(struct tp *t, const char *key, unsigned long lo, unsigned long hi,
                   unsigned long *out)
{
    const char *v = t->host->config_get(t->h, key);
    char *end;
    unsigned long n;

    if (!v)
        return SBX_OK;
    n = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || n < lo || n > hi)
        return t->host->set_error(t->h, SBX_E_CONFIG, "%s: '%s' is not %lu to %lu", key, v,
                                  lo, hi);
    *out = n;
    return SBX_OK;
}

int tp_setting_yes(struct tp *t, const char *key, int dflt)
{
    const char *v = t->host->config_get(t->h, key);

    return v ? !strcmp(v, "yes") : dflt;
}

int tp_say(const sbx_output_sink_v1 *sink, const char *text)
{
    if (!sink || !sink->write)
        return 0;
    return sink->write(sink->ud, SBX_STREAM_STDOUT, text, strlen(text));
}

void tp_exited(sbx_exec_outcome_v1 *out, int code)
{
    out->status = code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
    out->exit_code = code;
}
