/* core/secrets/sealed.c - the sealed:v1: text format of a sealed credential
 *
 *     sealed:v1:BASE64
 *
 * BASE64 is URL-safe base64 without padding (no '+', '/' or '=', so the
 * value needs no quoting in an ini file or a shell) of
 *
 *     key id (4 bytes) || box length (2 bytes, big-endian) || box
 *
 * where the box is crypto_box_seal() of the value to the host's public
 * key and the key id the first 4 bytes of BLAKE2b(public key).  The key id
 * lets a value sealed to another host be named as such, and the length
 * lets a cut value be told from a damaged one.  Neither is secret.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "secrets/secrets.h"

#define PREFIX "sealed:v1:"
#define PREFIX_LEN (sizeof PREFIX - 1)
#define HEAD (CORE_KEY_ID_BYTES + 2)
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

int core_sealed_encode(const unsigned char pk[CORE_PK_BYTES],
                       const unsigned char id[CORE_KEY_ID_BYTES],
                       const void *plain, size_t len, char **out)
{
    size_t boxlen = len + crypto_box_SEALBYTES;
    size_t bloblen = HEAD + boxlen;
    size_t b64len = sodium_base64_ENCODED_LEN(bloblen, B64);
    unsigned char *blob;
    char *s;

    *out = NULL;
    if (len == 0 || len > CORE_SEALED_MAX)
        return core_error_set(SBX_E_INVAL, NULL,
                              "a value to seal must have 1 to %d bytes", CORE_SEALED_MAX);
    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
    blob = malloc(bloblen);
    s = malloc(PREFIX_LEN + b64len);
    if (!blob || !s) {
        free(blob);
        free(s);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    memcpy(blob, id, CORE_KEY_ID_BYTES);
    blob[CORE_KEY_ID_BYTES] = (unsigned char)(boxlen >> 8);
    blob[CORE_KEY_ID_BYTES + 1] = (unsigned char)(boxlen & 0xff);
    if (crypto_box_seal(blob + HEAD, plain, len, pk) != 0) {
        free(blob);
        free(s);
        return core_error_set(SBX_E_INTERNAL, NULL, "crypto_box_seal failed");
    }
    memcpy(s, PREFIX, PREFIX_LEN);
    sodium_bin2base64(s + PREFIX_LEN, b64len, blob, bloblen, B64);
    free(blob);
    *out = s;
    return SBX_OK;
}

static bool b64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

/* Copy the format word after "sealed:" for a message: printable, short. */
static void format_word(const char *v, char *buf, size_t size)
{
    size_t n = 0;

    for (v += 7; *v && *v != ':' && n + 1 < size && n < 12; v++)
        buf[n++] = (*v > ' ' && *v < 127) ? *v : '?';
    buf[n] = '\0';
}

int core_sealed_parse(const char *value, core_sealed *out, char *why, size_t whylen)
{
    const char *b64;
    size_t n, dec_len = 0, have;
    bool partial = false;
    unsigned char *blob;

    memset(out, 0, sizeof *out);
    if (strncmp(value, "sealed:", 7) != 0) {
        snprintf(why, whylen, "not a sealed value");
        return SBX_E_CONFIG;
    }
    if (strncmp(value, PREFIX, PREFIX_LEN) != 0) {
        char word[16];
        format_word(value, word, sizeof word);
        snprintf(why, whylen, "unknown sealed format 'sealed:%s' (this version reads "
                 "sealed:v1)", word);
        return SBX_E_CONFIG;
    }
    b64 = value + PREFIX_LEN;
    n = strlen(b64);
    if (n == 0) {
        snprintf(why, whylen, "sealed value is truncated: nothing follows 'sealed:v1:'");
        return SBX_E_CONFIG;
    }
    for (size_t i = 0; i < n; i++) {
        if (!b64_char(b64[i])) {
            snprintf(why, whylen, "sealed value is corrupt: character %zu is not URL-safe "
                     "base64", PREFIX_LEN + i + 1);
            return SBX_E_CONFIG;
        }
    }
    blob = malloc(n);   /* base64 decodes to fewer bytes than characters */
    if (!blob) {
        snprintf(why, whylen, "out of memory");
        return SBX_E_NOMEM;
    }
    /* A cut value may end in the middle of a base64 group, which libsodium
     * rejects: decode the whole groups then, to measure what is there. */
    if (sodium_base642bin(blob, n, b64, n, NULL, &dec_len, NULL, B64) != 0) {
        partial = true;
        if (sodium_base642bin(blob, n, b64, n - n % 4, NULL, &dec_len, NULL, B64) != 0) {
            free(blob);
            snprintf(why, whylen, "sealed value is corrupt: not valid base64");
            return SBX_E_CONFIG;
        }
    }
    if (dec_len < HEAD) {
        free(blob);
        snprintf(why, whylen, "sealed value is truncated: %zu characters is too short "
                 "for a header", n);
        return SBX_E_CONFIG;
    }
    out->boxlen = ((size_t)blob[CORE_KEY_ID_BYTES] << 8) | blob[CORE_KEY_ID_BYTES + 1];
    have = dec_len - HEAD;
    memcpy(out->id, blob, CORE_KEY_ID_BYTES);
    if (out->boxlen <= crypto_box_SEALBYTES) {
        free(blob);
        snprintf(why, whylen, "sealed value is corrupt: its header is invalid");
        return SBX_E_CONFIG;
    }
    if (have < out->boxlen) {
        free(blob);
        snprintf(why, whylen, "sealed value is truncated: it holds %zu of its %zu bytes "
                 "(was the line cut?)", have, out->boxlen);
        return SBX_E_CONFIG;
    }
    if (partial || have > out->boxlen) {
        free(blob);
        snprintf(why, whylen, "sealed value is corrupt: it has data after its end");
        return SBX_E_CONFIG;
    }
    memmove(blob, blob + HEAD, out->boxlen);
    out->box = blob;
    return SBX_OK;
}

void core_sealed_free(core_sealed *s)
{
    if (s) {
        free(s->box);
        s->box = NULL;
    }
}
