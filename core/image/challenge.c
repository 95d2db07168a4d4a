/* core/image/challenge.c - the WWW-Authenticate header of a registry
 *
 * RFC 7235: a scheme, then comma-separated auth-params NAME=VALUE where
 * the value is a token or a quoted-string with backslash escapes.  A
 * registry sends one challenge (Basic or Bearer, with realm, service,
 * scope); more challenges after the first are ignored.  No library of
 * ours parses this header, so it is hand-written, bounded and fuzzed
 * (tests/fuzz/fuzz-image.c).
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "image-int.h"

static bool tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static void skip_ws(const char *v, size_t len, size_t *i)
{
    while (*i < len && (v[*i] == ' ' || v[*i] == '\t'))
        (*i)++;
}

/* Read a token or a quoted-string into @out (@cap bytes with the NUL). */
static bool value(const char *v, size_t len, size_t *i, char *out, size_t cap)
{
    size_t n = 0;
    if (*i < len && v[*i] == '"') {
        (*i)++;
        for (;;) {
            if (*i >= len)
                return false;           /* unterminated */
            char c = v[(*i)++];
            if (c == '"')
                break;
            if (c == '\\') {
                if (*i >= len)
                    return false;
                c = v[(*i)++];
            }
            if (c == '\0' || (unsigned char)c < 0x20 || n + 1 >= cap)
                return false;
            out[n++] = c;
        }
    } else {
        while (*i < len && tchar(v[*i])) {
            if (n + 1 >= cap)
                return false;
            out[n++] = v[(*i)++];
        }
        if (n == 0)
            return false;
    }
    out[n] = '\0';
    return true;
}

bool img_challenge_parse(const char *v, size_t len, img_challenge *c)
{
    memset(c, 0, sizeof *c);
    size_t i = 0;
    skip_ws(v, len, &i);
    size_t s = i;
    while (i < len && tchar(v[i]))
        i++;
    if (i - s == 5 && strncasecmp(v + s, "basic", 5) == 0)
        c->scheme = IMG_AUTH_BASIC;
    else if (i - s == 6 && strncasecmp(v + s, "bearer", 6) == 0)
        c->scheme = IMG_AUTH_BEARER;
    else
        return false;
    for (;;) {
        skip_ws(v, len, &i);
        if (i >= len)
            break;
        size_t k = i;
        while (i < len && tchar(v[i]))
            i++;
        size_t klen = i - k;
        skip_ws(v, len, &i);
        if (klen == 0 || i >= len || v[i] != '=')
            break;                      /* the next challenge's scheme: ours is done */
        i++;
        skip_ws(v, len, &i);
        char tmp[1024];
        if (!value(v, len, &i, tmp, sizeof tmp))
            return false;
        char *dst = NULL;
        size_t cap = 0;
        if (klen == 5 && strncasecmp(v + k, "realm", 5) == 0)
            dst = c->realm, cap = sizeof c->realm;
        else if (klen == 7 && strncasecmp(v + k, "service", 7) == 0)
            dst = c->service, cap = sizeof c->service;
        else if (klen == 5 && strncasecmp(v + k, "scope", 5) == 0)
            dst = c->scope, cap = sizeof c->scope;
        if (dst) {
            if (strlen(tmp) >= cap)
                return false;
            memcpy(dst, tmp, strlen(tmp) + 1);
        }
        skip_ws(v, len, &i);
        if (i < len && v[i] == ',') {
            i++;
            continue;
        }
        break;
    }
    return c->scheme == IMG_AUTH_BASIC || c->realm[0] != '\0';
}
