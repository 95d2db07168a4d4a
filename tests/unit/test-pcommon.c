/* tests/unit/test-pcommon.c - the providers' shared RFC 3339 parser,
 * random hex, settings checks, retry hints and the refusal of an image a
 * provider cannot run (plugins/common)
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "noimage.h"
#include "randhex.h"
#include "retry-hints.h"
#include "rfc3339.h"
#include "setting-checks.h"
#include "tap.h"

#define NS 1000000000ull

/* 2025-01-02T03:04:05Z */
#define T0 1735787045ull

static void is_time(const char *s, uint64_t want)
{
    uint64_t got = pc_rfc3339_ns(s);

    ok(got == want, "rfc3339 %s: %llu (want %llu)", s ? s : "NULL", (unsigned long long)got,
       (unsigned long long)want);
}

/* A host whose last error's message is kept to be looked at. */
static char last_error[512];

__attribute__((format(printf, 3, 4)))
static int t_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;

    (void)h;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

static const sbx_host_v1 host = {.struct_size = sizeof host, .set_error = t_set_error};

static long hinted_ms = -2;
static int not_started_calls;

/* The checks providers put in their settings_read tables. */
static void setting_check_checks(void)
{
    ok(pc_plain_name("fn-1.a_b", "-_.") && !pc_plain_name("fn 1", "-_.") &&
       !pc_plain_name("", "-_.") && !pc_plain_name("a/b", "-_."),
       "pc_plain_name: letters, digits and the extra characters, not empty");
    ok(!pc_check_http_url("http://127.0.0.1:1") && !pc_check_http_url("https://x") &&
       pc_check_http_url("ftp://x") && pc_check_http_url(""),
       "pc_check_http_url: http:// and https:// only");
    ok(!pc_check_workdir("/home/user/") && !pc_check_workdir("/w") &&
       pc_check_workdir("/") && pc_check_workdir("//") && pc_check_workdir("rel") &&
       pc_check_workdir("/a/../b") && pc_check_workdir("/a/./b") && pc_check_workdir("/a\nb"),
       "pc_check_workdir: absolute, not /, no .. or ., one line");
}

static void t_retry_after(sbx_host_handle *h, uint64_t ms)
{
    (void)h;
    hinted_ms = (long)ms;
}

static void t_not_started(sbx_host_handle *h)
{
    (void)h;
    not_started_calls++;
}

static void hint_checks(void)
{
    sbx_host_v1 full = host, old = host;
    sbx_exec_outcome_v1 out = {.struct_size = sizeof out};
    sbx_exec_outcome_v1 out11 = {.struct_size = offsetof(sbx_exec_outcome_v1, not_started)};
    pc_hints hn;

    full.retry_after = t_retry_after;
    full.not_started = t_not_started;
    old.retry_after = t_retry_after;
    old.not_started = t_not_started;
    old.struct_size = offsetof(sbx_host_v1, retry_after);  /* a core before ABI 1.1 */

    pc_retry_after(&full, NULL, NULL, 1500);
    ok(hinted_ms == 1500, "retry hint: 1500 ms passed on (%ld)", hinted_ms);
    hinted_ms = -2;
    pc_retry_after(&full, NULL, NULL, -1);
    ok(hinted_ms == -2, "retry hint: none said, none given");

    pc_hints_reset(&hn);
    pc_retry_after(&full, NULL, &hn, 2500);
    ok(hinted_ms == 2500 && hn.retry_after_ms == 2500,
       "a request on a sandbox: its Retry-After to the host and into the record");
    hinted_ms = -2;
    pc_hints_retry_after(&hn, -1);
    pc_hints_not_started(&hn);
    pc_hints_to_outcome(&hn, &full, NULL, &out);
    ok(out.not_started == 1 && out.retry_after_ms == 2500 && hinted_ms == -2 &&
           not_started_calls == 0,
       "an exec's hints go in its outcome (ABI 1.12), not to the host");
    pc_hints_reset(&hn);
    pc_hints_to_outcome(&hn, &full, NULL, &out);
    ok(out.not_started == 0 && out.retry_after_ms == 0, "none said: none in the outcome");

    pc_hints_retry_after(&hn, 700);
    pc_hints_not_started(&hn);
    pc_hints_to_outcome(&hn, &full, NULL, &out11);
    ok(hinted_ms == 700 && not_started_calls == 1,
       "a core before 1.12 (a shorter outcome): the hints go to the host");
    hinted_ms = -2;
    pc_hints_to_outcome(&hn, &old, NULL, &out11);
    pc_retry_after(&old, NULL, NULL, 1500);
    ok(hinted_ms == -2 && not_started_calls == 1,
       "an older host table without the slots: neither is called");
}

static int logged;

__attribute__((format(printf, 3, 4)))
static void t_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    (void)h;
    (void)level;
    (void)fmt;
    logged++;
}

/* An asked image is refused naming provider and image; a template's
 * default and no image at all go on. */
static void noimage_checks(void)
{
    sbx_host_v1 lh = host;
    sbx_create_spec_v1 spec = {.struct_size = sizeof spec, .image = "python:3.12-slim",
                               .image_explicit = 1};

    lh.log = t_log;
    last_error[0] = '\0';
    ok(pc_image_cannot_run(&lh, NULL, "vm", &spec, "it boots its own") == SBX_E_NOTSUP &&
       strstr(last_error, "vm cannot run image 'python:3.12-slim'") &&
       strstr(last_error, "image.vm") && strstr(last_error, "it boots its own"),
       "an asked image: SBX_E_NOTSUP naming the provider and the image (%s)", last_error);
    last_error[0] = '\0';
    spec.image_explicit = 0;
    ok(pc_image_cannot_run(&lh, NULL, "vm", &spec, "it boots its own") == SBX_OK &&
       !last_error[0] && logged == 1, "a template's default image: ignored, and logged");
    spec.image = NULL;
    spec.image_explicit = 1;
    ok(pc_image_cannot_run(&lh, NULL, "vm", &spec, "x") == SBX_OK && !last_error[0] &&
       logged == 1, "no image: nothing to refuse");
}

int main(void)
{
    hint_checks();
    noimage_checks();
    is_time("2025-01-02T03:04:05Z", T0 * NS);
    is_time("2025-01-02t03:04:05z", T0 * NS);
    is_time("2025-01-02 03:04:05Z", T0 * NS);
    is_time("1970-01-01T00:00:00.5Z", NS / 2);
    is_time("2025-01-02T03:04:05.123Z", T0 * NS + 123000000);
    is_time("2025-01-02T03:04:05.123456789Z", T0 * NS + 123456789);
    is_time("2025-01-02T03:04:05.1234567891234Z", T0 * NS + 123456789);
    /* The offset is applied: 05:04:05+02:00 is 03:04:05 UTC. */
    is_time("2025-01-02T05:04:05+02:00", T0 * NS);
    is_time("2025-01-02T05:34:05.5+02:30", T0 * NS + NS / 2);
    is_time("2025-01-01T23:04:05-04:00", T0 * NS);
    is_time("2025-01-02T03:04:05+00:00", T0 * NS);
    is_time("2025-01-02T03:04:05-00:00", T0 * NS);
    is_time("2024-02-29T00:00:00Z", 1709164800ull * NS);
    is_time("2025-01-02T03:04:60Z", (T0 + 55) * NS);

    /* Malformed or out of range: 0. */
    is_time(NULL, 0);
    is_time("", 0);
    is_time("2025-01-02T03:04:05", 0);
    is_time("2025-01-02T03:04:05Zjunk", 0);
    is_time("2025-01-02T03:04:05+0200", 0);
    is_time("2025-01-02T03:04:05+24:00", 0);
    is_time("2025-01-02T03:04:05.Z", 0);
    is_time("2025-1-02T03:04:05Z", 0);
    is_time("2025-02-30T03:04:05Z", 0);
    is_time("2025-13-02T03:04:05Z", 0);
    is_time("2025-01-02T24:04:05Z", 0);
    is_time("1969-12-31T23:59:59Z", 0);
    is_time("1970-01-01T00:30:00+01:00", 0);

    {
        char a[65], b[65];
        int hex = 1;

        memset(a, 'x', sizeof a);
        ok(pc_random_hex(a, 16) == 0 && strlen(a) == 32, "random hex: 16 bytes, 32 digits");
        for (size_t i = 0; a[i]; i++)
            hex &= (a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f');
        ok(hex, "random hex: lower-case hex digits only (%s)", a);
        ok(pc_random_hex(b, 16) == 0 && strcmp(a, b) != 0, "random hex: two draws differ");
        ok(pc_random_hex(a, 100) == 0 && strlen(a) == 64, "random hex: more than 32 bytes cut to 32");
        ok(pc_random_hex(a, 0) == 0 && a[0] == '\0', "random hex: 0 bytes, empty string");
    }
    setting_check_checks();
    return tap_done();
}
