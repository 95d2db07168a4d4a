/* plugins/volcengine/volc-sign.c - Volcengine's HMAC-SHA256 request
 * signature (see volc-sign.h) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "shwrap.h"
#include "volc-sign.h"

static void hex(const unsigned char *b, size_t n, char *out)
{
    sodium_bin2hex(out, n * 2 + 1, b, n);
}

void vc_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, data, len);
    hex(h, sizeof h, out);
}

static void hmac(unsigned char out[crypto_auth_hmacsha256_BYTES], const void *key, size_t klen,
                 const char *msg)
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, klen);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg, strlen(msg));
    crypto_auth_hmacsha256_final(&st, out);
    sodium_memzero(&st, sizeof st);
}

/* Indexes of the headers sorted by lowercase name. */
static int cmp_name(const void *a, const void *b)
{
    const vc_header *x = *(const vc_header *const *)a, *y = *(const vc_header *const *)b;
    return strcasecmp(x->name, y->name);
}

static void add_lower(sw_buf *b, const char *s)
{
    for (; *s; s++) {
        char c = (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s;
        sw_buf_add(b, &c, 1);
    }
}

/* "name;name;..." of the sorted headers. */
static void add_names(sw_buf *b, const vc_header *const *hs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            sw_buf_add(b, ";", 1);
        add_lower(b, hs[i]->name);
    }
}

static const vc_header **sorted(const vc_sign_in *in)
{
    const vc_header **hs = calloc(in->n_headers ? in->n_headers : 1, sizeof *hs);
    if (!hs)
        return NULL;
    for (size_t i = 0; i < in->n_headers; i++) {
        if (!in->headers[i].name || !in->headers[i].value) {
            free(hs);
            return NULL;
        }
        hs[i] = &in->headers[i];
    }
    qsort(hs, in->n_headers, sizeof *hs, cmp_name);
    return hs;
}

char *vc_canonical(const vc_sign_in *in)
{
    const vc_header **hs = sorted(in);
    sw_buf b = {0};
    char body[65];

    if (!hs)
        return NULL;
    sw_buf_addf(&b, "%s\n%s\n%s\n", in->method, in->path, in->query ? in->query : "");
    for (size_t i = 0; i < in->n_headers; i++) {
        /* Values trimmed at both ends (the SDKs' canonicalHeaderValues). */
        const char *v = hs[i]->value, *e = v + strlen(v);
        while (*v == ' ' || *v == '\t')
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        add_lower(&b, hs[i]->name);
        sw_buf_add(&b, ":", 1);
        sw_buf_add(&b, v, (size_t)(e - v));
        sw_buf_add(&b, "\n", 1);
    }
    sw_buf_add(&b, "\n", 1);
    add_names(&b, hs, in->n_headers);
    vc_sha256_hex(in->body ? in->body : "", in->body ? in->body_len : 0, body);
    sw_buf_addf(&b, "\n%s", body);
    free(hs);
    if (b.oom) {
        sw_buf_free(&b);
        return NULL;
    }
    return b.p;
}

char *vc_authorization(const vc_sign_in *in, char sig[65])
{
    char date[9], creq_hash[65], sigx[65];
    unsigned char k1[32], k2[32], k3[32], k4[32], s[32];
    char *creq = vc_canonical(in);
    const vc_header **hs = creq ? sorted(in) : NULL;
    sw_buf sts = {0}, auth = {0};

    if (!creq || !hs || strlen(in->x_date) < 8) {
        free(creq);
        free(hs);
        return NULL;
    }
    memcpy(date, in->x_date, 8);
    date[8] = '\0';
    vc_sha256_hex(creq, strlen(creq), creq_hash);
    free(creq);
    sw_buf_addf(&sts, "HMAC-SHA256\n%s\n%s/%s/%s/request\n%s", in->x_date, date, in->region,
                in->service, creq_hash);
    hmac(k1, in->secret_key, in->secret_len, date);
    hmac(k2, k1, sizeof k1, in->region);
    hmac(k3, k2, sizeof k2, in->service);
    hmac(k4, k3, sizeof k3, "request");
    if (!sts.oom)
        hmac(s, k4, sizeof k4, sts.p);
    sodium_memzero(k1, sizeof k1);
    sodium_memzero(k2, sizeof k2);
    sodium_memzero(k3, sizeof k3);
    sodium_memzero(k4, sizeof k4);
    hex(s, sizeof s, sigx);
    sw_buf_addf(&auth, "HMAC-SHA256 Credential=%s/%s/%s/%s/request, SignedHeaders=", in->access_key,
                date, in->region, in->service);
    add_names(&auth, hs, in->n_headers);
    sw_buf_addf(&auth, ", Signature=%s", sigx);
    free(hs);
    if (sts.oom || auth.oom) {
        sw_buf_free(&sts);
        sw_buf_free(&auth);
        return NULL;
    }
    sw_buf_free(&sts);
    if (sig)
        memcpy(sig, sigx, 65);
    return auth.p;
}

void vc_x_date(time_t t, char out[17])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
        snprintf(out, 17, "19700101T000000Z");
}
