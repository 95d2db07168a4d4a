/* tests/unit/test-image-parse.c - the image store's hand-written parsers:
 * references (core/image/ref.c) as docker reads them, and a registry's
 * WWW-Authenticate header (core/image/challenge.c)
 *
 * The fuzz target (tests/fuzz/fuzz-image.c) proves they never crash and
 * keep their own promises; these prove the answers are right.
 */
#include "config.h"

#include <string.h>

#include "image/image-int.h"
#include "tap.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void ref_is(const char *in, const char *domain, const char *path, const char *tag,
                   const char *digest, const char *text)
{
    img_ref r;
    char why[160] = "", out[600] = "";
    bool okp = img_ref_parse(in, &r, why, sizeof why);
    if (okp)
        img_ref_format(&r, out, sizeof out);
    ok(okp && strcmp(r.domain, domain) == 0 && strcmp(r.path, path) == 0 &&
       strcmp(r.tag, tag) == 0 && strcmp(r.digest, digest) == 0 && strcmp(out, text) == 0,
       "'%s' is %s (%s)", in, text, okp ? out : why);
}

static void ref_bad(const char *in, const char *reason)
{
    img_ref r;
    char why[160] = "";
    bool okp = img_ref_parse(in, &r, why, sizeof why);
    ok(!okp && strstr(why, reason) != NULL, "'%s' refused: %s", in, why);
}

static void www_is(const char *in, int scheme, const char *realm, const char *service,
                   const char *scope)
{
    img_challenge c;
    bool okp = img_challenge_parse(in, strlen(in), &c);
    ok(okp && c.scheme == scheme && strcmp(c.realm, realm) == 0 &&
       strcmp(c.service, service) == 0 && strcmp(c.scope, scope) == 0,
       "WWW-Authenticate: %s", in);
}

static void www_bad(const char *in)
{
    img_challenge c;
    ok(!img_challenge_parse(in, strlen(in), &c), "WWW-Authenticate refused: %s", in);
}

int main(void)
{
    ref_is("debian", "docker.io", "library/debian", "latest", "",
           "docker.io/library/debian:latest");
    ref_is("debian:12-slim", "docker.io", "library/debian", "12-slim", "",
           "docker.io/library/debian:12-slim");
    ref_is("team/tool", "docker.io", "team/tool", "latest", "", "docker.io/team/tool:latest");
    ref_is("127.0.0.1:5000/a/b:v1", "127.0.0.1:5000", "a/b", "v1", "",
           "127.0.0.1:5000/a/b:v1");
    ref_is("localhost/x", "localhost", "x", "latest", "", "localhost/x:latest");
    ref_is("ghcr.io/o/r@sha256:" D64, "ghcr.io", "o/r", "", "sha256:" D64,
           "ghcr.io/o/r@sha256:" D64);
    ref_is("r.example:443/a.b/c__d-e--f:T_1.x@sha256:" D64, "r.example:443", "a.b/c__d-e--f",
           "T_1.x", "sha256:" D64, "r.example:443/a.b/c__d-e--f:T_1.x@sha256:" D64);
    ref_bad("Bad/Name", "lower-case");
    ref_bad("127.0.0.1:5000/a/", "lower-case");
    ref_bad("a/-b", "lower-case");
    ref_bad("a___b", "lower-case");
    ref_bad("a:.tag", "tag");
    ref_bad("a@sha256:abc", "digest");
    ref_bad("a@sha256:" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
            "digest");
    ref_bad("host:99999999/a", "registry");
    ref_bad("", "empty");

    www_is("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
           "scope=\"repository:library/debian:pull\"",
           IMG_AUTH_BEARER, "https://auth.docker.io/token", "registry.docker.io",
           "repository:library/debian:pull");
    www_is("bearer  realm = \"http://h/t?x=1\" , Service=svc, error=\"insufficient_scope\"",
           IMG_AUTH_BEARER, "http://h/t?x=1", "svc", "");
    www_is("Basic realm=\"polysandbox-test\"", IMG_AUTH_BASIC, "polysandbox-test", "", "");
    www_is("Bearer realm=\"a\\\"b\", Basic realm=x", IMG_AUTH_BEARER, "a\"b", "", "");
    www_bad("Negotiate");
    www_bad("Bearer realm=\"unterminated");
    www_bad("Bearer service=\"no realm\"");
    www_bad("");
    return tap_done();
}
