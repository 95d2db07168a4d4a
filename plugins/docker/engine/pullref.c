/* plugins/docker/engine/pullref.c - the pure parts of pulling an image:
 * image references, the daemon's progress stream, the classification of
 * its errors, and the X-Registry-Auth header (unit-tested, no daemon)
 *
 * POST /images/create?fromImage=REPO&tag=TAG pulls every tag of REPO
 * when tag is empty, so a reference is always split into the repository
 * (with its registry host and port, if any) and one tag or digest.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "engine/engine.h"

static void fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static bool all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return false;
    return true;
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/* Docker's rule: the first component names a registry when it has a dot
 * or a port, or is "localhost". */
static bool is_registry(const char *s, size_t n)
{
    return memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && !memcmp(s, "localhost", 9));
}

static bool host_ok(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t hn = colon ? (size_t)(colon - s) : n;
    if (hn == 0 || !all_of(s, hn, LOWER_DIGITS UPPER ".-"))
        return false;
    if (colon) {
        size_t pn = n - hn - 1;
        if (pn == 0 || pn > 5 || !all_of(colon + 1, pn, "0123456789"))
            return false;
    }
    return true;
}

int dk_imgref_parse(const char *ref, struct dk_imgref *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n = ref ? strlen(ref) : 0;
    if (n == 0)
        return fail(err, errlen, "an empty image name"), SBX_E_INVAL;
    for (size_t i = 0; i < n; i++)
        if (!isascii((unsigned char)ref[i]) || !isgraph((unsigned char)ref[i])) {
            char shown[201];
            size_t k = 0;
            for (; k < n && k + 1 < sizeof shown; k++)
                shown[k] = isascii((unsigned char)ref[k]) && isgraph((unsigned char)ref[k])
                           ? ref[k] : '?';
            shown[k] = '\0';
            return fail(err, errlen, "image '%s' holds a blank or a control or non-ASCII "
                        "character (shown as ?)", shown), SBX_E_INVAL;
        }
    if (n >= sizeof out->repo + sizeof out->tag)
        return fail(err, errlen, "image '%.200s...' is too long", ref), SBX_E_INVAL;
    /* name[:tag][@algo:hex]: the digest wins over a tag, as with docker. */
    const char *at = strchr(ref, '@');
    size_t name_len = at ? (size_t)(at - ref) : n;
    if (at) {
        const char *dg = at + 1, *c = strchr(dg, ':');
        size_t an = c ? (size_t)(c - dg) : 0, hn = c ? strlen(c + 1) : 0;
        if (!c || !an || !all_of(dg, an, LOWER_DIGITS "+._-") || hn < 32 ||
            !all_of(c + 1, hn, "0123456789abcdef") || strlen(dg) >= sizeof out->tag)
            return fail(err, errlen, "image '%.200s': '%.100s' is not a digest (like sha256:<64 "
                        "hex digits>)", ref, dg), SBX_E_INVAL;
        memcpy(out->tag, dg, strlen(dg) + 1);
    }
    /* A colon after the last slash is the tag's; one before it, a port's. */
    const char *slash = memrchr(ref, '/', name_len);
    const char *colon = memchr(slash ? slash : ref, ':', name_len - (size_t)((slash ? slash : ref) - ref));
    size_t repo_len = colon ? (size_t)(colon - ref) : name_len;
    if (colon && !at) {
        size_t tn = name_len - repo_len - 1;
        if (tn == 0 || tn > 128 || !all_of(colon + 1, tn, LOWER_DIGITS UPPER "_.-") ||
            colon[1] == '.' || colon[1] == '-')
            return fail(err, errlen, "image '%.200s': '%.*s' is not a tag (letters, digits, _ . -; "
                        "at most 128)", ref, (int)(tn > 128 ? 128 : tn), colon + 1), SBX_E_INVAL;
        memcpy(out->tag, colon + 1, tn);
        out->tag[tn] = '\0';
    }
    if (!out->tag[0])
        strcpy(out->tag, "latest");
    if (repo_len == 0 || repo_len >= sizeof out->repo)
        return fail(err, errlen, "image '%.200s': no repository name", ref), SBX_E_INVAL;
    memcpy(out->repo, ref, repo_len);
    out->repo[repo_len] = '\0';
    /* Components: a registry host first (optional), then lower-case paths. */
    const char *s = out->repo, *first_end = strchr(s, '/');
    size_t fn = first_end ? (size_t)(first_end - s) : repo_len;
    const char *path = s;
    if (first_end && is_registry(s, fn)) {
        if (!host_ok(s, fn))
            return fail(err, errlen, "image '%.200s': '%.*s' is not a registry host[:port]", ref,
                        (int)fn, s), SBX_E_INVAL;
        memcpy(out->registry, s, fn);
        out->registry[fn] = '\0';
        path = first_end + 1;
    } else {
        strcpy(out->registry, "docker.io");
    }
    for (const char *c = path;;) {
        const char *e = strchr(c, '/');
        size_t cn = e ? (size_t)(e - c) : strlen(c);
        if (cn == 0 || !all_of(c, cn, LOWER_DIGITS "._-") || !isalnum((unsigned char)c[0]) ||
            !isalnum((unsigned char)c[cn - 1]))
            return fail(err, errlen, "image '%.200s': '%.*s' is not a repository path component "
                        "(lower-case letters, digits, and . _ - inside)", ref, (int)cn, c),
                   SBX_E_INVAL;
        if (!e)
            break;
        c = e + 1;
    }
    return SBX_OK;
}

bool dk_registry_same(const char *a, const char *b)
{
    static const char *const hub[] = {"docker.io", "index.docker.io", "registry-1.docker.io",
                                      "registry.hub.docker.com", NULL};
    if (!strcasecmp(a, b))
        return true;
    bool ha = false, hb = false;
    for (int i = 0; hub[i]; i++) {
        ha = ha || !strcasecmp(a, hub[i]);
        hb = hb || !strcasecmp(b, hub[i]);
    }
    return ha && hb;
}

/* ---- the progress stream ---- */

void dk_pullstream_init(struct dk_pullstream *s)
{
    memset(s, 0, sizeof *s);
}

static void printable(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    for (size_t i = 0; src[i] && o + 1 < cap; i++)
        dst[o++] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : ' ';
    while (o > 0 && dst[o - 1] == ' ')
        o--;
    dst[o] = '\0';
}

static void one_line(struct dk_pullstream *s)
{
    json_t *j = json_loadb(s->line, s->len, 0, NULL);
    s->lines++;
    if (!json_is_object(j)) {
        json_decref(j);
        return;
    }
    const char *msg = json_string_value(json_object_get(json_object_get(j, "errorDetail"),
                                                        "message"));
    if (!msg)
        msg = json_string_value(json_object_get(j, "error"));
    if (!msg && json_object_get(j, "errorDetail"))
        msg = "the daemon reported an error without a message";
    if (msg && !s->error[0])
        printable(s->error, sizeof s->error, msg[0] ? msg : "(empty error)");
    const char *st = json_string_value(json_object_get(j, "status"));
    if (st && !json_object_get(j, "progressDetail"))
        printable(s->status, sizeof s->status, st);
    json_decref(j);
}

void dk_pullstream_feed(struct dk_pullstream *s, const void *buf, size_t n)
{
    const char *b = buf;
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '\n') {
            if (!s->overflow && s->len)
                one_line(s);
            s->len = 0;
            s->overflow = false;
        } else if (s->len < sizeof s->line) {
            s->line[s->len++] = b[i];
        } else {
            s->overflow = true; /* a line past the buffer: skipped whole */
        }
    }
}

void dk_pullstream_finish(struct dk_pullstream *s)
{
    if (!s->overflow && s->len)
        one_line(s);
    s->len = 0;
    s->overflow = false;
}

/* ---- errors ---- */

static bool has(const char *msg, const char *what)
{
    return strcasestr(msg, what) != NULL;
}

int dk_pull_classify(const char *msg, long http_status)
{
    static const char *const auth[] = {"no basic auth credentials", "unauthorized",
                                       "authentication required", "incorrect username or password",
                                       "authentication failed", NULL};
    static const char *const missing[] = {"manifest unknown", "not found", "does not exist",
                                          "name unknown", "no such image", NULL};
    static const char *const net[] = {"connection refused", "no such host", "dial tcp",
                                      "i/o timeout", "connection reset", "tls handshake",
                                      "deadline exceeded", "network is unreachable",
                                      "server misbehaving", "eof", "timeout",
                                      "http response to https client", NULL};
    for (int i = 0; auth[i]; i++)
        if (has(msg, auth[i]))
            return SBX_E_AUTH;
    for (int i = 0; missing[i]; i++)
        if (has(msg, missing[i]))
            return SBX_E_NOT_FOUND;
    if (has(msg, "denied"))
        return SBX_E_AUTH;
    for (int i = 0; net[i]; i++)
        if (has(msg, net[i]))
            return SBX_E_NETWORK;
    if (http_status == 401 || http_status == 403)
        return SBX_E_AUTH;
    if (http_status == 404)
        return SBX_E_NOT_FOUND;
    if (http_status == 400)
        return SBX_E_INVAL;
    return SBX_E_BACKEND;
}

/* ---- X-Registry-Auth ---- */

/* @s as the inside of a JSON string into @o (room checked by the caller:
 * at most 6 bytes per input byte). */
static size_t json_escape(char *o, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            o[k++] = '\\';
            o[k++] = (char)c;
        } else if (c < 0x20) {
            k += (size_t)sprintf(o + k, "\\u%04x", c);
        } else {
            o[k++] = (char)c;
        }
    }
    return k;
}

int dk_registry_auth_header(const char *userpass, size_t len, const char *server, char **out,
                            size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    const char *colon = memchr(userpass, ':', len);
    if (!colon || colon == userpass || memchr(userpass, '\0', len))
        return SBX_E_CONFIG;
    size_t un = (size_t)(colon - userpass), pn = len - un - 1, sn = strlen(server);
    size_t cap = 64 + 6 * (un + pn + sn);
    char *json = malloc(cap);
    if (!json)
        return SBX_E_NOMEM;
    size_t k = 0;
    k += (size_t)sprintf(json + k, "{\"username\":\"");
    k += json_escape(json + k, userpass, un);
    k += (size_t)sprintf(json + k, "\",\"password\":\"");
    k += json_escape(json + k, colon + 1, pn);
    k += (size_t)sprintf(json + k, "\",\"serveraddress\":\"");
    k += json_escape(json + k, server, sn);
    k += (size_t)sprintf(json + k, "\"}");
    char *b64 = pc_b64_encode(json, k);
    explicit_bzero(json, cap);
    free(json);
    if (!b64)
        return SBX_E_NOMEM;
    /* base64url (RFC 4648 section 5), padded: what the daemon decodes. */
    size_t bn = strlen(b64);
    static const char name[] = "X-Registry-Auth: ";
    char *line = malloc(sizeof name + bn);
    if (line) {
        memcpy(line, name, sizeof name - 1);
        for (size_t i = 0; i < bn; i++)
            line[sizeof name - 1 + i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
        line[sizeof name - 1 + bn] = '\0';
        *out = line;
        *outlen = sizeof name + bn;
    }
    explicit_bzero(b64, bn);
    free(b64);
    return line ? SBX_OK : SBX_E_NOMEM;
}
