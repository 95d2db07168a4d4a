/* core/image/registry.c - the Docker Registry HTTP API v2 through libcurl
 *
 * GET of manifests and blobs, with the registry's authentication: a 401
 * names a Bearer realm (a token service, asked for a pull token of the
 * repository: anonymously, or with the user name and password of
 * [registry HOST] in polysandbox.ini) or Basic (that user name and
 * password); the request is retried once with what it gave.  The
 * password is a credential as providers' are (sealed:v1:, env:, file:),
 * opened only when the registry asks, and wiped with the header made of
 * it when the client ends.  Bodies are capped: a manifest at 4 MiB, a blob at the
 * size its manifest declared (a larger answer is refused as it arrives,
 * never stored).  Everything the registry says is hostile.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "context.h"
#include "secrets/secrets.h"
#include "image-int.h"
#include "settings-read.h"

#define IMG_MANIFEST_MAX (4u << 20)
#define IMG_TOKEN_MAX (64u << 10)

struct img_client {
    const struct sbx_ctx *ctx;  /* its [registry HOST] settings, the host key */
    CURL *h;
    char domain[256];           /* as the reference writes it: [registry DOMAIN] */
    char scheme[6];             /* "http" for loopback, else "https" */
    char host[256];             /* registry-1.docker.io for docker.io */
    char path[256];
    char ref_text[600];
    char *authz;                /* "Authorization: ..." once a challenge was met */
    char *basic;                /* "Authorization: Basic ..." of [registry DOMAIN], once opened */
    const core_setting *user;   /* [registry DOMAIN] username, or NULL */
    const core_setting *password;
};

/* Where an answer goes: a growing buffer, or a file with its hash. */
typedef struct sink {
    char *buf;
    size_t len, cap;            /* the buffer's; cap: the most we take */
    size_t flen;                /* bytes written to @fd */
    int fd;                     /* >= 0: a blob */
    crypto_hash_sha256_state *st;
    bool over;                  /* more than cap arrived */
    bool io_error;
    long code;                  /* the status line's, as it arrives */
    char type[128];             /* Content-Type */
    char www[2048];             /* WWW-Authenticate */
} sink;

static bool loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0 ||
           strcmp(host, "[::1]") == 0;
}

static const core_setting *registry_setting(const struct sbx_ctx *ctx, const char *domain,
                                            const char *key)
{
    char full[300];
    snprintf(full, sizeof full, "%s.%s", domain, key);
    for (size_t i = 0; ctx && i < ctx->cfg.n_registries; i++)
        if (strcmp(ctx->cfg.registries[i].key, full) == 0)
            return &ctx->cfg.registries[i];
    return NULL;
}

img_client *img_client_new(const struct sbx_ctx *ctx, const img_ref *r, const char *ref_text)
{
    img_client *c = calloc(1, sizeof *c);
    if (!c) {
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        return NULL;
    }
    c->h = curl_easy_init();
    if (!c->h) {
        free(c);
        core_error_set(SBX_E_NOMEM, NULL, "image '%s': libcurl could not start", ref_text);
        return NULL;
    }
    char hostonly[256];
    snprintf(hostonly, sizeof hostonly, "%s", r->domain);
    char *colon = strchr(hostonly, ':');
    if (colon)
        *colon = '\0';
    snprintf(c->scheme, sizeof c->scheme, "%s", loopback(hostonly) ? "http" : "https");
    snprintf(c->host, sizeof c->host, "%s",
             strcmp(r->domain, "docker.io") == 0 ? "registry-1.docker.io" : r->domain);
    snprintf(c->path, sizeof c->path, "%s", r->path);
    snprintf(c->ref_text, sizeof c->ref_text, "%s", ref_text);
    snprintf(c->domain, sizeof c->domain, "%s", r->domain);
    c->ctx = ctx;
    c->user = registry_setting(ctx, r->domain, "username");
    c->password = registry_setting(ctx, r->domain, "password");
    return c;
}

static void wipe(char **p)
{
    if (*p) {
        sodium_memzero(*p, strlen(*p));
        free(*p);
        *p = NULL;
    }
}

/* c->basic from [registry DOMAIN]; false (no error) when it has no
 * username and password. */
static int open_basic(img_client *c, bool *have)
{
    *have = false;
    if (c->basic) {
        *have = true;
        return SBX_OK;
    }
    if (!c->user || !c->password) {
        if (c->user || c->password)
            return core_error_set(SBX_E_CONFIG, NULL, "image '%s': [registry %s] of %s:%d "
                                  "has a %s but no %s", c->ref_text, c->domain,
                                  (c->user ?: c->password)->file,
                                  (c->user ?: c->password)->line,
                                  c->user ? "username" : "password",
                                  c->user ? "password" : "username");
        return SBX_OK;
    }
    const char *pw = NULL;
    size_t pwlen = 0;
    int rc = core_secret_open(c->ctx, c->password, &pw, &pwlen);
    if (rc != SBX_OK)
        return rc;
    size_t ulen = strlen(c->user->value);
    size_t plain_len = ulen + 1 + pwlen;
    size_t b64 = sodium_base64_ENCODED_LEN(plain_len, sodium_base64_VARIANT_ORIGINAL);
    size_t len = sizeof "Authorization: Basic " + b64;
    unsigned char *plain = malloc(plain_len);
    char *a = malloc(len);
    if (!plain || !a) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    } else if (memchr(pw, '\r', pwlen) || memchr(pw, '\n', pwlen)) {
        rc = core_error_set(SBX_E_CONFIG, NULL, "image '%s': the password of [registry %s] "
                            "(%s:%d) holds a line break", c->ref_text, c->domain,
                            c->password->file, c->password->line);
    } else {
        memcpy(plain, c->user->value, ulen);
        plain[ulen] = ':';
        memcpy(plain + ulen + 1, pw, pwlen);
        memcpy(a, "Authorization: Basic ", sizeof "Authorization: Basic " - 1);
        sodium_bin2base64(a + sizeof "Authorization: Basic " - 1, b64, plain, plain_len,
                          sodium_base64_VARIANT_ORIGINAL);
        c->basic = a;
        a = NULL;
        *have = true;
    }
    if (plain) {
        sodium_memzero(plain, plain_len);
        free(plain);
    }
    free(a);
    core_secret_release(pw);
    return rc;
}

void img_client_free(img_client *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    wipe(&c->authz);
    wipe(&c->basic);
    free(c);
}

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
    sink *k = arg;
    size_t len = sz * n;
    /* Only a 200's body goes to a blob's file; an error's is read. */
    bool to_file = k->fd >= 0 && k->code == 200;
    size_t cap = k->fd >= 0 && !to_file ? IMG_TOKEN_MAX : k->cap;
    size_t have = to_file ? k->flen : k->len;
    if (len > cap - have) {
        k->over = true;
        return 0;                       /* aborts the transfer */
    }
    if (to_file) {
        for (size_t off = 0; off < len;) {
            ssize_t w = write(k->fd, p + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                k->io_error = true;
                return 0;
            }
            off += (size_t)w;
        }
        crypto_hash_sha256_update(k->st, (const unsigned char *)p, len);
        k->flen += len;
        return len;
    } else {
        char *nb = realloc(k->buf, k->len + len + 1);
        if (!nb) {
            k->io_error = true;
            return 0;
        }
        k->buf = nb;
        memcpy(k->buf + k->len, p, len);
        k->buf[k->len + len] = '\0';
    }
    k->len += len;
    return len;
}

/* Keep a header's value (trimmed) when its name is @name. */
static void keep_header(const char *p, size_t len, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':')
        return;
    p += nl + 1;
    len -= nl + 1;
    while (len && (*p == ' ' || *p == '\t'))
        p++, len--;
    while (len && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
        len--;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
    sink *k = arg;
    size_t len = sz * n;
    /* A redirect's headers come first: keep only the last answer's. */
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
        k->type[0] = '\0';
        k->www[0] = '\0';
        const char *sp = memchr(p, ' ', len);
        k->code = sp ? strtol(sp + 1, NULL, 10) : 0;
        k->len = 0;                     /* a redirect's body is dropped */
        if (k->fd >= 0 && k->code == 200 && k->flen) {
            k->over = true;             /* a second 200 would append to the blob */
            return 0;
        }
    }
    keep_header(p, len, "Content-Type", k->type, sizeof k->type);
    keep_header(p, len, "WWW-Authenticate", k->www, sizeof k->www);
    return len;
}

/* One GET of @url into @k with @accept; the HTTP status in @status. */
static int get(img_client *c, const char *url, const char *accept, const char *authz, sink *k,
               long *status)
{
    struct curl_slist *hs = NULL, *t;
    char acc[512];
    snprintf(acc, sizeof acc, "Accept: %s", accept);
    if (!(t = curl_slist_append(hs, acc)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    hs = t;
    if (authz) {
        if (!(t = curl_slist_append(hs, authz))) {
            curl_slist_free_all(hs);
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        }
        hs = t;
    }
    CURL *h = c->h;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
    /* A registry that stops sending for a minute is given up on. */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "polysandbox/" PACKAGE_VERSION);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, k);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, k);
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hs);
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (rc == CURLE_OK)
        return SBX_OK;
    if (k->over)
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': %s sent more than %zu bytes",
                              c->ref_text, url, k->cap);
    if (k->io_error)
        return core_error_set(SBX_E_IO, NULL, "image '%s': cannot store the answer of %s: %s",
                              c->ref_text, url, strerror(errno));
    return core_error_set(rc == CURLE_OPERATION_TIMEDOUT ? SBX_E_TIMEOUT : SBX_E_NETWORK, NULL,
                          "image '%s': %s: %s", c->ref_text, url, curl_easy_strerror(rc));
}

/* Ask the token service of @ch for a pull token of our repository. */
static int fetch_token(img_client *c, const img_challenge *ch)
{
    if (strncmp(ch->realm, "http://", 7) != 0 && strncmp(ch->realm, "https://", 8) != 0)
        return core_error_set(SBX_E_AUTH, NULL, "image '%s': the registry's token realm '%s' "
                              "is not an http(s) URL", c->ref_text, ch->realm);
    char scope[600];
    if (ch->scope[0])
        snprintf(scope, sizeof scope, "%s", ch->scope);
    else
        snprintf(scope, sizeof scope, "repository:%s:pull", c->path);
    char *es = curl_easy_escape(c->h, ch->service, 0);
    char *eo = curl_easy_escape(c->h, scope, 0);
    char url[2048];
    int n = (es && eo) ? snprintf(url, sizeof url, "%s%sservice=%s&scope=%s", ch->realm,
                                  strchr(ch->realm, '?') ? "&" : "?", es, eo) : -1;
    curl_free(es);
    curl_free(eo);
    if (n < 0 || (size_t)n >= sizeof url)
        return core_error_set(SBX_E_AUTH, NULL, "image '%s': the token request is too long",
                              c->ref_text);
    /* With [registry HOST]'s user name and password, as docker asks. */
    bool basic;
    int rc = open_basic(c, &basic);
    if (rc != SBX_OK)
        return rc;
    sink k = { .fd = -1, .cap = IMG_TOKEN_MAX };
    long status;
    rc = get(c, url, "application/json", basic ? c->basic : NULL, &k, &status);
    if (rc == SBX_OK && status != 200)
        rc = core_error_set(SBX_E_AUTH, NULL, "image '%s': the token service %s answered "
                            "%ld%s", c->ref_text, ch->realm, status,
                            basic && status == 401 ? " to the user name and password of "
                                                     "[registry HOST]" : "");
    json_t *j = NULL;
    if (rc == SBX_OK) {
        j = json_loadb(k.buf ? k.buf : "", k.len, 0, NULL);
        json_t *tok = json_object_get(j, "token");
        if (!json_is_string(tok))
            tok = json_object_get(j, "access_token");
        const char *s = json_string_value(tok);
        if (!s || !*s || strpbrk(s, "\r\n")) {
            rc = core_error_set(SBX_E_AUTH, NULL, "image '%s': the token service %s gave "
                                "no token", c->ref_text, ch->realm);
        } else {
            size_t len = strlen(s) + sizeof "Authorization: Bearer ";
            char *a = malloc(len);
            if (!a) {
                rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            } else {
                snprintf(a, len, "Authorization: Bearer %s", s);
                free(c->authz);
                c->authz = a;
            }
        }
    }
    json_decref(j);
    if (k.buf)
        sodium_memzero(k.buf, k.len);
    free(k.buf);
    return rc;
}

/* The registry's own words from an error body ({"errors":[{"message"}]}). */
static void registry_words(const sink *k, char *out, size_t len)
{
    out[0] = '\0';
    if (!k->buf)
        return;
    json_t *j = json_loadb(k->buf, k->len, 0, NULL);
    const char *m = json_string_value(json_object_get(json_array_get(
        json_object_get(j, "errors"), 0), "message"));
    if (m) {
        snprintf(out, len, ": %s", m);
        for (char *p = out; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
    }
    json_decref(j);
}

/* GET /v2/PATH/KIND/WHAT, meeting one challenge on the way. */
static int fetch(img_client *c, const char *kind, const char *what, const char *accept, sink *k)
{
    char url[1200];
    snprintf(url, sizeof url, "%s://%s/v2/%s/%s/%s", c->scheme, c->host, c->path, kind, what);
    for (int attempt = 0;; attempt++) {
        long status;
        int rc = get(c, url, accept, c->authz, k, &status);
        if (rc != SBX_OK)
            return rc;
        if (status == 200)
            return SBX_OK;
        char words[300];
        registry_words(k, words, sizeof words);
        if (status == 401 && attempt == 0 && k->www[0]) {
            img_challenge ch;
            if (!img_challenge_parse(k->www, strlen(k->www), &ch))
                return core_error_set(SBX_E_AUTH, NULL, "image '%s': the registry %s asks "
                                      "for authentication this client cannot give",
                                      c->ref_text, c->host);
            if (ch.scheme == IMG_AUTH_BASIC) {
                bool have;
                if ((rc = open_basic(c, &have)) != SBX_OK)
                    return rc;
                if (!have)
                    return core_error_set(SBX_E_AUTH, NULL, "image '%s': the registry %s asks "
                                          "for a user name and password: give them as "
                                          "username and password in [registry %s] of "
                                          "polysandbox.ini", c->ref_text, c->host, c->domain);
                wipe(&c->authz);
                if (!(c->authz = strdup(c->basic)))
                    return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            } else if ((rc = fetch_token(c, &ch)) != SBX_OK) {
                return rc;
            }
            /* Start the answer again (an error's body only: nothing was stored). */
            free(k->buf);
            k->buf = NULL;
            k->len = 0;
            continue;
        }
        if (status == 401 && c->basic && c->authz && strcmp(c->authz, c->basic) == 0)
            return core_error_set(SBX_E_AUTH, NULL, "image '%s': the registry %s refused the "
                                  "user name and password of [registry %s] (%s:%d)%s",
                                  c->ref_text, c->host, c->domain, c->password->file,
                                  c->password->line, words);
        int code = status == 404 ? SBX_E_NOT_FOUND
                 : (status == 401 || status == 403) ? SBX_E_AUTH
                 : status == 429 ? SBX_E_RATE_LIMITED : SBX_E_BACKEND;
        return core_error_set(code, NULL, "image '%s': the registry %s answered %ld for %s%s",
                              c->ref_text, c->host, status, url, words);
    }
}

int img_get_manifest(img_client *c, const char *what, char **body, size_t *len, char *type,
                     size_t type_len)
{
    static const char accept[] =
        "application/vnd.oci.image.index.v1+json, "
        "application/vnd.docker.distribution.manifest.list.v2+json, "
        "application/vnd.oci.image.manifest.v1+json, "
        "application/vnd.docker.distribution.manifest.v2+json";
    sink k = { .fd = -1, .cap = IMG_MANIFEST_MAX };
    int rc = fetch(c, "manifests", what, accept, &k);
    if (rc != SBX_OK) {
        free(k.buf);
        return rc;
    }
    if (!k.buf && !(k.buf = calloc(1, 1)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    *body = k.buf;
    *len = k.len;
    /* "application/json; charset=..." keeps only the media type. */
    char *semi = strchr(k.type, ';');
    if (semi)
        *semi = '\0';
    snprintf(type, type_len, "%s", k.type);
    return SBX_OK;
}

int img_get_blob(img_client *c, const char *digest, int64_t size, int fd,
                 crypto_hash_sha256_state *st)
{
    sink k = { .fd = fd, .st = st, .cap = (size_t)size };
    int rc = fetch(c, "blobs", digest, "*/*", &k);
    free(k.buf);
    if (rc == SBX_OK && k.flen != (size_t)size)
        rc = core_error_set(SBX_E_BACKEND, NULL, "image '%s': blob %s is %zu bytes, its "
                            "manifest says %lld", c->ref_text, digest, k.flen, (long long)size);
    return rc;
}
