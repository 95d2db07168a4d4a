/* core/image/ref.c - the image reference grammar
 *
 * [DOMAIN/]PATH[:TAG][@sha256:HEX], as distribution/reference (docker's)
 * reads it: the first component is a domain when it holds a '.' or a ':'
 * or is "localhost"; path components are lower-case alphanumerics joined
 * by '.', '_', "__" or '-'s.  Hand-written (no C library parses it), so
 * it is fuzzed (tests/fuzz/fuzz-image.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "image-int.h"

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool img_digest_valid(const char *d)
{
    if (strncmp(d, "sha256:", 7) != 0 || strlen(d) != IMG_DIGEST_LEN)
        return false;
    for (const char *p = d + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

/* One path component of @n bytes. */
static bool component_ok(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i < n; i++) {
        if (lower_alnum(s[i]))
            continue;
        if (s[i] == '.' || s[i] == '-') {
            if (s[i] == '.' && !lower_alnum(s[i - 1]))
                return false;
            continue;
        }
        if (s[i] == '_') {
            /* "_" or "__" between alphanumerics */
            if (s[i - 1] == '_' && (i < 2 || s[i - 2] == '_'))
                return false;
            if (s[i - 1] != '_' && !lower_alnum(s[i - 1]))
                return false;
            continue;
        }
        return false;
    }
    /* '-' may repeat, but a separator other than '-' may not follow one. */
    for (size_t i = 1; i < n; i++)
        if ((s[i] == '.' || s[i] == '_') && s[i - 1] == '-')
            return false;
    return true;
}

static bool domain_ok(const char *s, size_t n)
{
    size_t i = 0, host = 0;
    while (i < n && s[i] != ':') {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-'))
            return false;
        i++;
        host++;
    }
    if (host == 0 || s[0] == '.' || s[0] == '-' || s[host - 1] == '.' || s[host - 1] == '-')
        return false;
    if (i < n) {                        /* ":PORT" */
        size_t digits = n - i - 1;
        if (digits == 0 || digits > 5)
            return false;
        for (i++; i < n; i++)
            if (s[i] < '0' || s[i] > '9')
                return false;
    }
    return true;
}

static bool tag_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool w = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_';
        if (!w && (i == 0 || (c != '.' && c != '-')))
            return false;
    }
    return true;
}

static bool fail(char *why, size_t len, const char *msg)
{
    snprintf(why, len, "%s", msg);
    return false;
}

bool img_ref_parse(const char *s, img_ref *r, char *why, size_t why_len)
{
    char buf[512];
    memset(r, 0, sizeof *r);
    if (strlen(s) >= sizeof buf)
        return fail(why, why_len, "too long");
    snprintf(buf, sizeof buf, "%s", s);

    char *at = strchr(buf, '@');
    if (at) {
        *at = '\0';
        if (!img_digest_valid(at + 1))
            return fail(why, why_len, "the digest is not sha256: and 64 lower-case hex digits");
        memcpy(r->digest, at + 1, IMG_DIGEST_LEN + 1);
    }
    char *slash = strrchr(buf, '/');
    char *colon = strrchr(buf, ':');
    if (colon && (!slash || colon > slash)) {
        *colon = '\0';
        if (!tag_ok(colon + 1))
            return fail(why, why_len, "the tag is not 1 to 128 of [A-Za-z0-9_.-] "
                        "(not starting with '.' or '-')");
        snprintf(r->tag, sizeof r->tag, "%s", colon + 1);
    }
    char *name = buf;
    char *first = strchr(name, '/');
    if (first && (memchr(name, '.', (size_t)(first - name)) ||
                  memchr(name, ':', (size_t)(first - name)) ||
                  (first - name == 9 && strncmp(name, "localhost", 9) == 0))) {
        if (!domain_ok(name, (size_t)(first - name)))
            return fail(why, why_len, "the registry is not HOST[:PORT]");
        /* Cut short, it would name another registry. */
        if ((size_t)(first - name) >= sizeof r->domain)
            return fail(why, why_len, "the registry is longer than 255 characters");
        snprintf(r->domain, sizeof r->domain, "%.*s", (int)(first - name), name);
        name = first + 1;
    } else {
        snprintf(r->domain, sizeof r->domain, "docker.io");
    }
    if (*name == '\0')
        return fail(why, why_len, "the repository path is empty");
    for (const char *c = name;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (!component_ok(c, n))
            return fail(why, why_len, "the repository path is not lower-case components "
                        "of [a-z0-9] joined by '.', '_', '__' or '-'");
        if (!e)
            break;
        c = e + 1;
    }
    bool library = strcmp(r->domain, "docker.io") == 0 && !strchr(name, '/');
    if (strlen(name) + (library ? 8 : 0) >= sizeof r->path)
        return fail(why, why_len, "the repository path is longer than 255 characters");
    size_t off = library ? 8 : 0;
    memcpy(r->path, "library/", off);
    memcpy(r->path + off, name, strlen(name) + 1);
    if (r->tag[0] == '\0' && r->digest[0] == '\0')
        snprintf(r->tag, sizeof r->tag, "latest");
    return true;
}

bool img_ref_format(const img_ref *r, char *out, size_t len)
{
    int n = snprintf(out, len, "%s/%s%s%s%s%s", r->domain, r->path, r->tag[0] ? ":" : "",
                     r->tag, r->digest[0] ? "@" : "", r->digest);
    return n >= 0 && (size_t)n < len;
}
