/* tests/fuzz/fuzz-cloudflare.c - the cloudflare provider on whatever the
 * sandbox bridge answers: its JSON (sandboxes, files, errors) and the
 * exec's server-sent events (base64 chunks, the exit event), parsed by
 * the provider's own SSE reader, from the canned server, through its ops
 * (see host.h fz_drive)
 */
#include "config.h"

#include <polysandbox/provider.h>

#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_cloudflare_provider_v1;

static const char *settings[] = {
    "api_url", NULL, "request_timeout", "5", NULL,
};
static const char *const secrets[] = {"api_key", "cf-fz-key-7c3e9a0b12d4", NULL};
static fz_host_conf conf = {.secrets = secrets};
static void *prov;

static int one(const uint8_t *data, size_t size)
{
    if (!prov)
        prov = fz_provider_start(&fz_cloudflare_provider_v1, &conf, settings);
    fz_drive(&conf, prov, data, size);
    return 0;
}

FZ_TARGET(cloudflare, NULL, one)
