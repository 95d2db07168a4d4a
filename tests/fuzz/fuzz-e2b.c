/* tests/fuzz/fuzz-e2b.c - the e2b provider on whatever E2B answers: the
 * control plane's JSON (sandboxes, pages of the list, errors) and envd's
 * (the Connect stream of an exec, unary RPCs, files), from the canned
 * server, through the provider's own code and ops (see host.h fz_drive)
 */
#include "config.h"

#include <polysandbox/provider.h>

#include "canned.h"
#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_e2b_provider_v1;

static const char *settings[] = {
    "api_url", NULL, "envd_url", NULL, "request_timeout", "5s", "connect_timeout", "2s",
    "keepalive", "1s", "templates", "python:py-tmpl, sh:base", NULL,
};
static const char *const secrets[] = { "api_key", "e2b_fz_key_d41d8cd98f00b204", NULL };
static fz_host_conf conf = { settings, secrets };
static void *prov;

static void init(void)
{
    settings[1] = settings[3] = fz_canned_url();
    if (fz_e2b_provider_v1.ops->init(fz_host(), fz_host_handle(&conf), &prov) != SBX_OK)
        fz_fail("the e2b provider does not start: %s", fz_host_error());
}

static int one(const uint8_t *data, size_t size)
{
    if (!prov)
        init();
    fz_drive(&fz_e2b_provider_v1, prov, data, size);
    return 0;
}

FZ_TARGET(e2b, init, one)
