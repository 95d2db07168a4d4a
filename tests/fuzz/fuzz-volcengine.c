/* tests/fuzz/fuzz-volcengine.c - the volcengine provider on whatever
 * Volcengine answers: the signed OpenAPI's JSON (CreateSandbox,
 * KillSandbox, ListSandboxes, errors in ResponseMetadata) and the AIO
 * sandbox's through the API gateway (shell exec, files), from the canned
 * server, through the provider's own code and ops (see host.h fz_drive)
 */
#include "config.h"

#include <polysandbox/provider.h>

#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_volcengine_provider_v1;

static const char *settings[] = {
    "api_url", NULL, "gateway_url", NULL, "function_id", "fn-fz", "region", "cn-beijing",
    "request_timeout", "5", NULL,
};
static const char *const secrets[] = {
    "access_key_id", "AKLTfzvolc5f2d1c", "secret_access_key", "fz-volc-secret-9b1e4a",
    NULL,
};
static fz_host_conf conf = { .secrets = secrets };
static void *prov;

static int one(const uint8_t *data, size_t size)
{
    if (!prov)
        prov = fz_provider_start(&fz_volcengine_provider_v1, &conf, settings);
    fz_drive(&conf, prov, data, size);
    return 0;
}

FZ_TARGET(volcengine, NULL, one)
