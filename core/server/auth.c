/* core/server/auth.c - bearer tokens
 *
 * Tokens come from a token file (one per line, '#' comments; the file
 * must be owned by us or root and readable by nobody else) and from
 * [server] tokens, a list of credential references ("sealed:v1:...",
 * "env:NAME", "file:PATH") opened with the library's sealed-credential
 * machinery.  Only a keyed BLAKE2b hash of each token is kept; a
 * presented token is hashed once and compared with every stored hash in
 * constant time (sodium_memcmp, no early exit), so neither the timing
 * nor the memory of the server tells a token.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>
#include <sodium.h>

#include "server.h"
#include "server-int.h"

#define TOKEN_MIN 16
#define TOKEN_MAX 4096
#define HASH crypto_generichash_BYTES

struct srv_auth {
    unsigned char key[crypto_generichash_KEYBYTES];
    unsigned char (*hash)[HASH];
    char (*owner)[SRV_OWNER_LEN + 1];
    size_t n;
};

/* The name under which what a token makes is kept (a job's owner): the
 * same for the same token across restarts and reorderings of the token
 * file, unlike its index or its keyed hash (a new key each start).  An
 * unkeyed BLAKE2b of a 16-character-or-longer token, under its own
 * prefix so it matches no other hash of it, kept only in the private
 * state directory. */
static void token_owner(const char *t, size_t len, char out[SRV_OWNER_LEN + 1])
{
    static const char ctx[] = "polysandboxd owner v1:";
    unsigned char h[SRV_OWNER_LEN / 2];
    crypto_generichash_state st;

    crypto_generichash_init(&st, NULL, 0, sizeof h);
    crypto_generichash_update(&st, (const unsigned char *)ctx, sizeof ctx - 1);
    crypto_generichash_update(&st, (const unsigned char *)t, len);
    crypto_generichash_final(&st, h, sizeof h);
    sodium_bin2hex(out, SRV_OWNER_LEN + 1, h, sizeof h);
    sodium_memzero(h, sizeof h);
}

static void token_hash(const struct srv_auth *a, const char *t, size_t len,
                       unsigned char out[HASH])
{
    crypto_generichash(out, HASH, (const unsigned char *)t, len, a->key, sizeof a->key);
}

static int token_ok(const char *t, size_t len, const char *where)
{
    if (len < TOKEN_MIN || len > TOKEN_MAX) {
        srv_log(NULL, "%s: a token must have %d to %d characters", where, TOKEN_MIN,
                TOKEN_MAX);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (t[i] <= ' ' || t[i] > '~') {
            srv_log(NULL, "%s: a token may hold printable ASCII without blanks only", where);
            return -1;
        }
    return 0;
}

static int add(struct srv_auth *a, const char *t, size_t len, const char *where)
{
    unsigned char (*h)[HASH];
    char (*o)[SRV_OWNER_LEN + 1];

    if (token_ok(t, len, where) != 0)
        return -1;
    if ((h = realloc(a->hash, (a->n + 1) * sizeof *h)))
        a->hash = h;
    if ((o = realloc(a->owner, (a->n + 1) * sizeof *o)))
        a->owner = o;
    if (!h || !o) {
        srv_log(NULL, "out of memory loading tokens");
        return -1;
    }
    token_hash(a, t, len, a->hash[a->n]);
    token_owner(t, len, a->owner[a->n]);
    a->n++;
    return 0;
}

static int load_file(struct srv_auth *a, const char *path)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc = -1, line = 0;

    if (fd < 0) {
        srv_log(NULL, "cannot open the token file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        srv_log(NULL, "the token file %s is not a regular file", path);
        goto out;
    }
    if (st.st_mode & 077) {
        srv_log(NULL, "the token file %s has mode %04o: others may read it (chmod 600 it)",
                path, (unsigned)(st.st_mode & 07777));
        goto out;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        srv_log(NULL, "the token file %s belongs to uid %u, neither us (%u) nor root", path,
                (unsigned)st.st_uid, (unsigned)geteuid());
        goto out;
    }
    if (st.st_size > 1024 * 1024) {
        srv_log(NULL, "the token file %s is larger than 1 MiB", path);
        goto out;
    }
    if (!(buf = sodium_malloc((size_t)st.st_size + 1))) {
        srv_log(NULL, "out of memory reading %s", path);
        goto out;
    }
    while (len < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            srv_log(NULL, "cannot read the token file %s: %s", path,
                    n < 0 ? strerror(errno) : "it shrank");
            goto out;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    rc = 0;
    for (char *p = buf, *nl; rc == 0 && p < buf + len; p = nl + 1) {
        char where[4200];
        size_t n;
        line++;
        if (!(nl = memchr(p, '\n', (size_t)(buf + len - p))))
            nl = buf + len;
        n = (size_t)(nl - p);
        while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        while (n && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        if (n == 0 || *p == '#')
            continue;
        snprintf(where, sizeof where, "%s:%d", path, line);
        rc = add(a, p, n, where);
    }
    if (rc == 0 && a->n == 0) {
        srv_log(NULL, "the token file %s holds no token", path);
        rc = -1;
    }
out:
    if (buf)
        sodium_free(buf);
    close(fd);
    return rc;
}

/* [server] tokens: credential references separated by commas or blanks. */
static int load_refs(srv *s, struct srv_auth *a, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    int rc = 0, i = 0;

    if (!copy)
        return -1;
    for (char *t = strtok_r(copy, ", \t", &save); t && rc == 0;
         t = strtok_r(NULL, ", \t", &save)) {
        char where[64];
        char *value = NULL;
        size_t len = 0;
        int e;
        snprintf(where, sizeof where, "[server] tokens, entry %d", ++i);
        e = sbx_secret_open(s->ctx, t, where, &value, &len);
        if (e != SBX_OK) {
            srv_log(NULL, "%s", sbx_error_message(sbx_ctx_last_error(s->ctx)));
            rc = -1;
            break;
        }
        rc = add(a, value, len, where);
        sbx_secret_free(value);
    }
    free(copy);
    return rc;
}

int srv_auth_load(srv *s)
{
    struct srv_auth *a = calloc(1, sizeof *a);

    if (!a || sodium_init() < 0) {
        free(a);
        srv_log(NULL, "cannot initialise libsodium");
        return -1;
    }
    s->auth = a;
    randombytes_buf(a->key, sizeof a->key);
    if (s->conf.token_file && load_file(a, s->conf.token_file) != 0)
        return -1;
    if (s->conf.tokens && load_refs(s, a, s->conf.tokens) != 0)
        return -1;
    return 0;
}

size_t srv_auth_count(const srv *s)
{
    return s->auth ? s->auth->n : 0;
}

int srv_auth_token(const srv *s, const char *token, size_t len)
{
    const struct srv_auth *a = s->auth;
    unsigned char h[HASH];
    int found = -1;

    if (!a || !a->n)
        return -1;
    token_hash(a, token, len, h);
    for (size_t i = 0; i < a->n; i++)
        if (sodium_memcmp(h, a->hash[i], HASH) == 0 && found < 0)
            found = (int)i;
    sodium_memzero(h, sizeof h);
    return found;
}

const char *srv_auth_owner(const srv *s, int token)
{
    if (token < 0 || !s->auth || (size_t)token >= s->auth->n)
        return "";
    return s->auth->owner[token];
}

int srv_auth_check(srv *s, srv_req *r)
{
    static const char *const alt[] = { "X-API-Key", "X-Auth-Token" };
    const char *h;
    int idx;

    if (!srv_auth_count(s))
        return 0;
    h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    /* The headers other servers' clients send the same token in (SWE-ReX,
     * Judge0), so that they work unchanged. */
    for (size_t i = 0; !h && i < sizeof alt / sizeof alt[0]; i++) {
        const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, alt[i]);
        if (v) {
            if ((idx = srv_auth_token(s, v, strlen(v))) >= 0) {
                r->token = idx;
                return 0;
            }
            srv_error(r, 401, "unauthorized", NULL, "the token in %s is not valid", alt[i]);
            srv_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"polysandboxd\"");
            return -1;
        }
    }
    if (!h) {
        srv_error(r, 401, "unauthorized", NULL, "this server needs a token: "
                  "Authorization: Bearer TOKEN");
    } else if (strncasecmp(h, "Bearer ", 7) != 0) {
        srv_error(r, 401, "unauthorized", NULL, "the Authorization header must be "
                  "'Bearer TOKEN'");
    } else {
        for (h += 7; *h == ' '; h++)
            ;
        if ((idx = srv_auth_token(s, h, strlen(h))) >= 0) {
            r->token = idx;
            return 0;
        }
        srv_error(r, 401, "unauthorized", NULL, "the token is not valid");
    }
    srv_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"polysandboxd\"");
    return -1;
}

void srv_auth_free(srv *s)
{
    if (!s->auth)
        return;
    free(s->auth->hash);
    free(s->auth->owner);
    sodium_memzero(s->auth->key, sizeof s->auth->key);
    free(s->auth);
    s->auth = NULL;
}
