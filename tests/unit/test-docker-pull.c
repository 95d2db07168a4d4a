/* tests/unit/test-docker-pull.c - the docker provider's pull, pure parts:
 * image references (registry host and port, tags, digests, the default
 * tag), the progress stream split at every byte with in-stream errors,
 * the classification of the daemon's messages, and X-Registry-Auth
 * (base64url JSON, decoded back).  No daemon needed. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "base64.h"
#include "engine/engine.h"
#include "tap.h"

static void ref_ok(const char *in, const char *repo, const char *tag, const char *reg)
{
    struct dk_imgref r;
    char err[300] = "";
    int rc = dk_imgref_parse(in, &r, err, sizeof err);
    ok(rc == SBX_OK && !strcmp(r.repo, repo) && !strcmp(r.tag, tag) && !strcmp(r.registry, reg),
       "'%s' -> fromImage '%s' tag '%s' registry '%s' (got %d '%s' '%s' '%s' %s)", in, repo, tag,
       reg, rc, r.repo, r.tag, r.registry, err);
}

static void ref_bad(const char *in, const char *why)
{
    struct dk_imgref r;
    char err[300] = "";
    int rc = dk_imgref_parse(in, &r, err, sizeof err);
    ok(rc == SBX_E_INVAL && strstr(err, why) && !strchr(err, '\n'), "'%s' refused: %s (%s)",
       strchr(in, '\n') ? "x\\ny" : in, why, err);
}

static void refs(void)
{
    const char *d64 = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char buf[300];
    ref_ok("debian", "debian", "latest", "docker.io");
    ref_ok("debian:12-slim", "debian", "12-slim", "docker.io");
    ref_ok("library/python:3.11", "library/python", "3.11", "docker.io");
    ref_ok("127.0.0.1:5000/x/y", "127.0.0.1:5000/x/y", "latest", "127.0.0.1:5000");
    ref_ok("127.0.0.1:5000/x/y:v1.2", "127.0.0.1:5000/x/y", "v1.2", "127.0.0.1:5000");
    ref_ok("localhost/img:t", "localhost/img", "t", "localhost");
    ref_ok("registry.example.com/team/app", "registry.example.com/team/app", "latest",
           "registry.example.com");
    ref_ok("user/app:tag", "user/app", "tag", "docker.io");
    snprintf(buf, sizeof buf, "127.0.0.1:5000/x@%s", d64);
    ref_ok(buf, "127.0.0.1:5000/x", d64, "127.0.0.1:5000");
    snprintf(buf, sizeof buf, "alpine:3.19@%s", d64);
    ref_ok(buf, "alpine", d64, "docker.io");
    ref_bad("", "empty");
    ref_bad("a b", "blank");
    ref_bad("x\ny", "control");
    ref_bad("Debian", "repository path");
    ref_bad("a//b", "repository path");
    ref_bad("x:", "not a tag");
    ref_bad("x:-t", "not a tag");
    ref_bad("x@sha256:abc", "not a digest");
    ref_bad("x@", "not a digest");
    ref_bad("127.0.0.1:99x/a", "registry host");
    ref_bad(":5000/a", "registry host");
    ref_bad("127.0.0.1:5000/", "repository path");
    ok(dk_registry_same("docker.io", "index.docker.io") &&
       dk_registry_same("127.0.0.1:5000", "127.0.0.1:5000") &&
       !dk_registry_same("127.0.0.1:5000", "127.0.0.1:5001") &&
       !dk_registry_same("docker.io", "quay.io"), "registry names compared (Docker Hub's aliases)");
}

static void feed_split(struct dk_pullstream *s, const char *text, size_t at)
{
    dk_pullstream_init(s);
    size_t n = strlen(text);
    dk_pullstream_feed(s, text, at);
    dk_pullstream_feed(s, text + at, n - at);
    dk_pullstream_finish(s);
}

static void stream(void)
{
    const char *good =
        "{\"status\":\"Pulling from x\",\"id\":\"latest\"}\r\n"
        "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":1,\"total\":2},\"id\":\"a\"}\r\n"
        "{\"status\":\"Digest: sha256:00\"}\r\n"
        "{\"status\":\"Status: Downloaded newer image for x:latest\"}\r\n";
    const char *bad =
        "{\"status\":\"Pulling from x\",\"id\":\"latest\"}\n"
        "{\"errorDetail\":{\"message\":\"manifest unknown: \\u001b gone\"},\"error\":\"other\"}\n"
        "{\"error\":\"second\"}";
    struct dk_pullstream *s = malloc(sizeof *s);
    int good_ok = 1, bad_ok = 1;
    for (size_t at = 0; at <= strlen(good); at++) {
        feed_split(s, good, at);
        good_ok &= !s->error[0] && s->lines == 4 &&
                   !strcmp(s->status, "Status: Downloaded newer image for x:latest");
    }
    ok(good_ok, "a good pull's stream, split at every byte: no error, the last status kept");
    for (size_t at = 0; at <= strlen(bad); at++) {
        feed_split(s, bad, at);
        bad_ok &= !strcmp(s->error, "manifest unknown:   gone") && s->lines == 3;
    }
    ok(bad_ok, "an in-stream error, split at every byte: errorDetail's message, printable, "
       "the first one (got '%s')", s->error);
    dk_pullstream_init(s);
    dk_pullstream_feed(s, "{\"error\":\"plain\"}", 17);
    dk_pullstream_finish(s);
    ok(!strcmp(s->error, "plain"), "an error without errorDetail, last line without newline");
    /* A line past the buffer is skipped whole; the next is read. */
    dk_pullstream_init(s);
    char *big = malloc(40000);
    memset(big, 'x', 40000);
    big[0] = '{';
    dk_pullstream_feed(s, big, 40000);
    dk_pullstream_feed(s, "\n{\"error\":\"after\"}\n", 19);
    ok(!strcmp(s->error, "after") && s->lines == 1, "an over-long line skipped, the next read");
    free(big);
    dk_pullstream_init(s);
    dk_pullstream_feed(s, "not json\n{\"errorDetail\":{}}\n", 28);
    ok(s->error[0] != '\0', "errorDetail without a message is still an error");
    free(s);
}

static void classify(void)
{
    struct { const char *msg; long st; int want; } c[] = {
        {"Head \"http://127.0.0.1:5000/v2/x/manifests/latest\": no basic auth credentials", 200,
         SBX_E_AUTH},
        {"unauthorized: authentication required", 500, SBX_E_AUTH},
        {"manifest for 127.0.0.1:5000/x:latest not found: manifest unknown: manifest unknown", 404,
         SBX_E_NOT_FOUND},
        {"pull access denied for nope, repository does not exist or may require 'docker login'",
         404, SBX_E_NOT_FOUND},
        {"Get \"http://127.0.0.1:1/v2/\": dial tcp 127.0.0.1:1: connect: connection refused", 500,
         SBX_E_NETWORK},
        {"denied: requested access to the resource is denied", 500, SBX_E_AUTH},
        {"something else", 403, SBX_E_AUTH},
        {"something else", 500, SBX_E_BACKEND},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        ok(dk_pull_classify(c[i].msg, c[i].st) == c[i].want, "classified: %s (%ld)", c[i].msg,
           c[i].st);
}

static void auth(void)
{
    char *line = NULL;
    size_t n = 0;
    const char up[] = "al\"ice:p@ss:w/rd?>>";
    int rc = dk_registry_auth_header(up, strlen(up), "127.0.0.1:5000", &line, &n);
    ok(rc == SBX_OK && line && !strncmp(line, "X-Registry-Auth: ", 17) && n == strlen(line) + 1,
       "X-Registry-Auth line made");
    const char *v = line ? line + 17 : "";
    ok(!strpbrk(v, "+/") && strlen(v) % 4 == 0, "base64url with padding (%s)", v);
    size_t dl = 0;
    unsigned char *dec = pc_b64_decode(v, &dl);
    json_t *j = dec ? json_loadb((const char *)dec, dl, 0, NULL) : NULL;
    ok(j && !strcmp(json_string_value(json_object_get(j, "username")), "al\"ice") &&
       !strcmp(json_string_value(json_object_get(j, "password")), "p@ss:w/rd?>>") &&
       !strcmp(json_string_value(json_object_get(j, "serveraddress")), "127.0.0.1:5000"),
       "decodes to username, password (split at the first colon), serveraddress");
    json_decref(j);
    free(dec);
    free(line);
    ok(dk_registry_auth_header("nocolon", 7, "h", &line, &n) == SBX_E_CONFIG && !line,
       "a value without user:password is refused");
    ok(dk_registry_auth_header(":pw", 3, "h", &line, &n) == SBX_E_CONFIG && !line,
       "an empty user is refused");
}

int main(void)
{
    refs();
    stream();
    classify();
    auth();
    return tap_done();
}
