/* tests/fuzz/fuzz-modal.c - the modal provider on whatever Modal's gRPC
 * services answer: the length-prefixed frames (mg_framer_feed, in pieces
 * of any size), the protobuf messages in them as each call and each
 * stream decodes and reads them (control plane and command router, the
 * legacy exec's batches), the trailers (grpc-status, the percent-encoded
 * grpc-message, grpc-status-details-bin's retry policy) and the JWTs,
 * through the provider's ops (see host.h fz_drive).  The answers reach
 * the provider in place of HTTP/2 (modal-wire.c has their form).
 */
#include "config.h"

#include <stdlib.h>

#include <polysandbox/provider.h>

#include "fuzz.h"
#include "host.h"

extern const sbx_provider_v1 fz_modal_provider_v1;

/* No socket is opened (modal-wire.c): the URL only has to be plain http,
 * as a local server's is, unless recording from the fake. */
static const char *settings[] = {
    "server_url", "http://127.0.0.1:9", "request_timeout", "5s", "exec", "auto",
    "image", "python:3.12-slim", NULL,
};
static const char *const secrets[] = {
    "token_id", "ak-fz0modal7e1c", "token_secret", "as-fz-modal-secret-4b8d2f9a", NULL,
};
static fz_host_conf conf = { .secrets = secrets };

/* A provider of its own for each input: it keeps the auth token, the app
 * and the image ids it was told, which would change what the next input
 * does. */
static int one(const uint8_t *data, size_t size)
{
    const char *url = getenv("SBX_FUZZ_MODAL_URL");
    void *prov;

    if (url && *url)
        settings[1] = url;
    prov = fz_provider_start(&fz_modal_provider_v1, &conf, settings);
    fz_drive(&conf, prov, data, size);
    fz_modal_provider_v1.ops->fini(prov);
    return 0;
}

FZ_TARGET(modal, NULL, one)
