/* tests/fuzz/fuzz-sealed.c - sealed credentials and the host key files
 * (core/secrets/sealed.c, core/secrets/secrets.c, core/secrets/secret-key.c)
 *
 * The first byte chooses what the rest is: a credential setting's value
 * ("sealed:v1:..." is opened with the harness's fixed key pair, through
 * core_secret_open as a provider's api_key would be), a secret.pub or a
 * secret.key file.  Beyond not crashing: a refusal says why without
 * quoting the value, and what opens parses.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "context.h"
#include "secrets/secrets.h"
#include "fuzz.h"
#include "settings-read.h"

#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

static struct sbx_ctx *ctx;
static char *other;     /* a directory for key files from the input */

/* The harness's key pair, from a fixed seed, so that the seeds in the
 * corpus (sealed to it) open. */
static void init(void)
{
    unsigned char seed[crypto_box_SEEDBYTES], pk[CORE_PK_BYTES], sk[CORE_SK_BYTES];
    char pk64[sodium_base64_ENCODED_LEN(CORE_PK_BYTES, B64)];
    char sk64[sodium_base64_ENCODED_LEN(CORE_SK_BYTES, B64)];
    char text[256];

    if (sodium_init() < 0)
        abort();
    memset(seed, 0x42, sizeof seed);
    crypto_box_seed_keypair(pk, sk, seed);
    sodium_bin2base64(pk64, sizeof pk64, pk, sizeof pk, B64);
    sodium_bin2base64(sk64, sizeof sk64, sk, sizeof sk, B64);
    snprintf(text, sizeof text, "# fuzz harness key\n%s\n", sk64);
    fz_write("keys/secret.key", text, strlen(text));
    snprintf(text, sizeof text, "# fuzz harness key\n%s\n", pk64);
    fz_write("keys/secret.pub", text, strlen(text));
    if (!(ctx = calloc(1, sizeof *ctx)))
        abort();
    ctx->cfg.dir = fz_path("keys");
    other = fz_path("other");
}

/* A refusal names what is wrong, never the value's base64. */
static void check_why(const char *value, const char *why)
{
    const char *b64 = strncmp(value, "sealed:v1:", 10) == 0 ? value + 10 : NULL;

    if (!why[0])
        fz_fail("'%s' refused without a reason", value);
    if (b64 && strlen(b64) >= 12 && strstr(why, b64))
        fz_fail("the refusal of a sealed value quotes it: %s", why);
}

static void value(const char *v)
{
    core_sealed box;
    char why[CORE_MSG_MAX / 2] = "";
    int parsed = core_sealed_parse(v, &box, why, sizeof why);

    if (parsed != SBX_OK)
        check_why(v, why);
    else if (box.boxlen <= crypto_box_SEALBYTES || !box.box)
        fz_fail("a sealed value parsed into a box of %zu bytes", box.boxlen);
    core_sealed_free(&box);
    if (!strncmp(v, "sealed:", 7)) {
        core_setting s = { (char *)"api_key", (char *)v, (char *)"providers.d/fz.ini", 3 };
        const char *out = NULL;
        size_t len = 0;
        int rc = core_secret_open(ctx, &s, &out, &len);
        if (rc == SBX_OK && parsed != SBX_OK)
            fz_fail("a sealed value that does not parse opened");
        if (rc == SBX_OK) {
            if (len == 0 || len > box.boxlen)
                fz_fail("a sealed value opened into %zu bytes", len);
            core_secret_release(out);
        } else {
            check_why(v, core_error_tls()->message);
        }
        core_error_clear();
    }
}

static int one(const uint8_t *data, size_t size)
{
    unsigned which = size ? data[0] % 3 : 0;
    char *rest = fz_strndup(size ? data + 1 : data, size ? size - 1 : 0);

    if (!ctx)
        init();
    if (which == 0) {
        value(rest);
    } else if (which == 1) {
        unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES];
        fz_write("other/secret.pub", size ? data + 1 : data, size ? size - 1 : 0);
        core_hostkey_load_public(other, pk, id);
    } else {
        unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES], *sk = NULL;
        char *path = NULL;
        fz_write("other/secret.key", size ? data + 1 : data, size ? size - 1 : 0);
        if (core_hostkey_load_secret(other, &sk, pk, id, &path) == SBX_OK)
            sodium_free(sk);
        free(path);
    }
    core_error_clear();
    free(rest);
    return 0;
}

FZ_TARGET(sealed, init, one)
