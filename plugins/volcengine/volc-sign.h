/* plugins/volcengine/volc-sign.h - Volcengine's request signature
 * (HMAC-SHA256, the scheme of its OpenAPI gateway open.volcengineapi.com,
 * built like AWS Signature V4; README.md names the sources)
 *
 *   CanonicalRequest = METHOD \n PATH \n QUERY \n
 *                      (lowercase(name) ":" trimmed value \n)* \n
 *                      signed header names joined by ";" \n hex(SHA256(body))
 *   StringToSign     = "HMAC-SHA256" \n X-Date \n
 *                      DATE "/" region "/" service "/request" \n
 *                      hex(SHA256(CanonicalRequest))
 *   kSigning         = HMAC(HMAC(HMAC(HMAC(secret, DATE), region), service),
 *                      "request")
 *   Authorization    = "HMAC-SHA256 Credential=" ak "/" scope
 *                      ", SignedHeaders=" names ", Signature=" hex(HMAC(kSigning,
 *                      StringToSign))
 *
 * SHA-256 and HMAC-SHA256 are libsodium's.  Nothing here allocates the
 * secret: it stays where the caller keeps it (guarded memory).
 */
#ifndef SBX_VOLC_SIGN_H
#define SBX_VOLC_SIGN_H

#include <stddef.h>
#include <time.h>

/* A header taking part in the signature; names in any case. */
typedef struct vc_header {
    const char *name;
    const char *value;
} vc_header;

typedef struct vc_sign_in {
    const char *method;          /* "POST" */
    const char *path;            /* "/" */
    const char *query;           /* already canonical: sorted, RFC 3986 encoded */
    const vc_header *headers;    /* to sign (x-date and x-content-sha256 among them) */
    size_t n_headers;
    const void *body;
    size_t body_len;
    const char *access_key;
    const char *secret_key;      /* (transfer none), never copied */
    size_t secret_len;
    const char *region, *service;
    const char *x_date;          /* "YYYYMMDDTHHMMSSZ" */
} vc_sign_in;

/* hex(SHA256(data)) into out (65 bytes with the NUL). */
void vc_sha256_hex(const void *data, size_t len, char out[65]);

/* The canonical request (malloc'd; the caller frees), or NULL when out
 * of memory or a header is missing its name or value. */
char *vc_canonical(const vc_sign_in *in);

/* The Authorization header's value into out (malloc'd; the caller frees),
 * or NULL when out of memory.  The hex signature alone is copied to sig
 * when not NULL (65 bytes). */
char *vc_authorization(const vc_sign_in *in, char sig[65]);

/* X-Date of @t (UTC), 17 bytes with the NUL. */
void vc_x_date(time_t t, char out[17]);

#endif
