/* tests/fuzz/fuzz-daytona.c - the daytona provider on whatever Daytona
 * answers: the API's JSON (sandboxes, their states while starting, the
 * list, errors) and the toolbox's (process execution, work directory,
 * files), from the canned server, through the provider's own code and
 * ops (see host.h fz_drive)
 *
 * start_timeout is the smallest there is (1 s): a sandbox that stays
 * "starting" is waited for in real time, as the provider would.
 */
#include "config.h"

#include <polysandbox/provider.h>

#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_daytona_provider_v1;

static const char *settings[] = {
    "api_url", NULL, "toolbox_url", NULL, "request_timeout", "5", "start_timeout", "1",
    "organization_id", "org-fz", NULL,
};
static const char *const secrets[] = { "api_key", "dtn_fz_key_0cc175b9c0f1b6a8", NULL };
static fz_host_conf conf = { .secrets = secrets };
static void *prov;

static int one(const uint8_t *data, size_t size)
{
    if (!prov)
        prov = fz_provider_start(&fz_daytona_provider_v1, &conf, settings);
    fz_drive(&conf, prov, data, size);
    return 0;
}

FZ_TARGET(daytona, NULL, one)
