/* tests/fuzz/fuzz-e2b.c - the e2b provider on whatever E2B answers: the
 * control plane's JSON (sandboxes, pages of the list, errors) and envd's
 * (the Connect stream of an exec, unary RPCs, files), from the canned
 * server, through the provider's own code and ops (see host.h fz_drive)
 */
#include "config.h"

#include <polysandbox/provider.h>

#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_e2b_provider_v1;

static const char *settings[] = {
    "api_url", NULL, "envd_url", NULL, "request_timeout", "5s", "connect_timeout", "2s",
    "keepalive", "1s", "templates", "python:py-tmpl, sh:base", NULL,
};
static const char *const secrets[] = { "api_key", "e2b_fz_key_d41d8cd98f00b204", NULL };
static fz_host_conf conf = { .secrets = secrets };
static void *prov;

static int one(const uint8_t *data, size_t size)
{
    if (!prov)
        prov = fz_provider_start(&fz_e2b_provider_v1, &conf, settings);
    fz_drive(&conf, prov, data, size);
    return 0;
}

FZ_TARGET(e2b, NULL, one)
