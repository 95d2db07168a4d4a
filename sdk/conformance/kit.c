/* sdk/conformance/kit.c - options, running and checking helpers of the kit */
#include "config.h"

#include "kit.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The context's error for this thread, as one line. */
static void ctx_error(conf_kit *k, char *out, size_t cap)
{
    const sbx_error *e = sbx_ctx_last_error(k->ctx);
    const char *msg = e ? sbx_error_message(e) : NULL;
    const char *prov = e ? sbx_error_provider(e) : NULL;
    int code = e ? sbx_error_code(e) : -1;
    snprintf(out, cap, "%s (%d)%s%s%s%s", sbx_strerror(code), code,
             msg && *msg ? ": " : "", msg ? msg : "",
             prov ? " [provider " : "", prov ? prov : "");
    if (prov)
        strncat(out, "]", cap - strlen(out) - 1);
}

bool conf_set_ok(conf_case *c, const char *what, int rc)
{
    if (rc == SBX_OK)
        return true;
    conf_fail(c, "%s: %s (%d)", what, sbx_strerror(rc), rc);
    return false;
}

sbx_create_opts *conf_copts(conf_kit *k, conf_case *c)
{
    sbx_create_opts *o = sbx_create_opts_new();
    if (o == NULL) {
        conf_fail(c, "sbx_create_opts_new: out of memory");
        return NULL;
    }
    if (!conf_set_ok(c, "sbx_create_opts_set_provider",
                     sbx_create_opts_set_provider(o, k->provider))) {
        sbx_create_opts_free(o);
        return NULL;
    }
    if (k->template_name != NULL &&
        !conf_set_ok(c, "sbx_create_opts_set_template",
                     sbx_create_opts_set_template(o, k->template_name))) {
        sbx_create_opts_free(o);
        return NULL;
    }
    return o;
}

sbx_exec_opts *conf_xshell(conf_case *c, const char *line)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    if (x == NULL) {
        conf_fail(c, "sbx_exec_opts_new: out of memory");
        return NULL;
    }
    if (!conf_set_ok(c, "sbx_exec_opts_set_shell",
                     sbx_exec_opts_set_shell(x, line))) {
        sbx_exec_opts_free(x);
        return NULL;
    }
    return x;
}

sbx_exec_opts *conf_xargv(conf_case *c, const char *const *argv)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    if (x == NULL) {
        conf_fail(c, "sbx_exec_opts_new: out of memory");
        return NULL;
    }
    if (!conf_set_ok(c, "sbx_exec_opts_set_argv",
                     sbx_exec_opts_set_argv(x, argv))) {
        sbx_exec_opts_free(x);
        return NULL;
    }
    return x;
}

sbx_result *conf_run(conf_kit *k, conf_case *c, const sbx_create_opts *copts,
                     const sbx_exec_opts *x)
{
    sbx_create_opts *own = NULL;
    sbx_result *r = NULL;
    if (x == NULL)
        return NULL;
    if (copts == NULL) {
        own = conf_copts(k, c);
        if (own == NULL)
            return NULL;
        copts = own;
    }
    int rc = sbx_run(k->ctx, copts, x, &r);
    if (rc != SBX_OK) {
        char err[1400];
        ctx_error(k, err, sizeof err);
        conf_fail(c, "sbx_run returned %s", err);
        r = NULL;
    } else if (r == NULL) {
        conf_fail(c, "sbx_run returned SBX_OK but no result");
    }
    sbx_create_opts_free(own);
    return r;
}

sbx_result *conf_run_shell(conf_kit *k, conf_case *c, const char *line)
{
    sbx_exec_opts *x = conf_xshell(c, line);
    sbx_result *r = conf_run(k, c, NULL, x);
    sbx_exec_opts_free(x);
    return r;
}

sbx_sandbox *conf_box(conf_kit *k, conf_case *c, const sbx_create_opts *copts,
                      bool persistent)
{
    sbx_create_opts *own = NULL;
    sbx_sandbox *sb = NULL;
    if (copts == NULL) {
        own = conf_copts(k, c);
        if (own == NULL)
            return NULL;
        if (persistent &&
            !conf_set_ok(c, "sbx_create_opts_set_persistent",
                         sbx_create_opts_set_persistent(own, true))) {
            sbx_create_opts_free(own);
            return NULL;
        }
        copts = own;
    }
    int rc = sbx_sandbox_create(k->ctx, copts, &sb);
    if (rc != SBX_OK) {
        char err[1400];
        ctx_error(k, err, sizeof err);
        conf_fail(c, "sbx_sandbox_create returned %s", err);
        sb = NULL;
    } else if (sb == NULL) {
        conf_fail(c, "sbx_sandbox_create returned SBX_OK but no sandbox");
    }
    sbx_create_opts_free(own);
    return sb;
}

sbx_result *conf_exec(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                      const sbx_exec_opts *x)
{
    sbx_result *r = NULL;
    if (sb == NULL || x == NULL)
        return NULL;
    int rc = sbx_sandbox_exec(sb, x, &r);
    if (rc != SBX_OK) {
        char err[1400];
        ctx_error(k, err, sizeof err);
        conf_fail(c, "sbx_sandbox_exec returned %s", err);
        return NULL;
    }
    if (r == NULL)
        conf_fail(c, "sbx_sandbox_exec returned SBX_OK but no result");
    return r;
}

sbx_result *conf_exec_shell(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                            const char *line)
{
    sbx_exec_opts *x = conf_xshell(c, line);
    sbx_result *r = conf_exec(k, c, sb, x);
    sbx_exec_opts_free(x);
    return r;
}

void conf_destroy(conf_kit *k, conf_case *c, sbx_sandbox *sb)
{
    if (sb == NULL)
        return;
    int rc = sbx_sandbox_destroy(sb);
    if (rc != SBX_OK) {
        char err[1400];
        ctx_error(k, err, sizeof err);
        conf_fail(c, "sbx_sandbox_destroy returned %s", err);
    }
}

bool conf_expect_rc(conf_kit *k, conf_case *c, const char *what, int want,
                    int got)
{
    if (want == got)
        return true;
    char err[1400];
    ctx_error(k, err, sizeof err);
    conf_fail(c, "%s: expected %s (%d), got %s (%d)\n  error: %s", what,
              sbx_strerror(want), want, sbx_strerror(got), got, err);
    return false;
}

void conf_describe(conf_case *c, const sbx_result *r)
{
    char out[200], err[200];
    size_t olen = 0, elen = 0;
    const void *o = sbx_result_stdout(r, &olen);
    const void *e = sbx_result_stderr(r, &elen);
    conf_preview(o, olen, out, sizeof out);
    conf_preview(e, elen, err, sizeof err);
    const char *emsg = sbx_result_error(r);
    conf_diag(c,
              "  result: status %s, exit_code %d, signal %d%s%s\n"
              "  stdout (%zu bytes%s): %s\n"
              "  stderr (%zu bytes%s): %s",
              sbx_run_status_name(sbx_result_status(r)),
              sbx_result_exit_code(r), sbx_result_signal(r),
              emsg ? ", error: " : "", emsg ? emsg : "", olen,
              sbx_result_stdout_truncated(r) ? ", truncated" : "", out, elen,
              sbx_result_stderr_truncated(r) ? ", truncated" : "", err);
}

bool conf_expect_status(conf_case *c, const char *what, sbx_run_status want,
                        const sbx_result *r)
{
    if (r == NULL)
        return false;
    sbx_run_status got = sbx_result_status(r);
    if (got == want)
        return true;
    conf_fail(c, "%s: expected status %s, got %s", what,
              sbx_run_status_name(want), sbx_run_status_name(got));
    conf_describe(c, r);
    return false;
}

bool conf_expect_int(conf_case *c, const char *what, long long want,
                     long long got)
{
    if (want == got)
        return true;
    conf_fail(c, "%s: expected %lld, got %lld", what, want, got);
    return false;
}

bool conf_expect_true(conf_case *c, const char *what, bool got)
{
    if (got)
        return true;
    conf_fail(c, "%s: expected true, got false", what);
    return false;
}

bool conf_expect_bytes(conf_case *c, const char *what, const void *want,
                       size_t want_len, const void *got, size_t got_len)
{
    const unsigned char *a = want, *b = got;
    size_t n = want_len < got_len ? want_len : got_len;
    size_t i = 0;
    if (b == NULL && got_len > 0)
        n = 0;
    while (i < n && a[i] == b[i])
        i++;
    if (i == n && want_len == got_len)
        return true;
    char pw[160], pg[160];
    /* Show the neighbourhood of the first difference. */
    size_t from = i > 16 ? i - 16 : 0;
    conf_preview(a + (from < want_len ? from : want_len),
                 from < want_len ? want_len - from : 0, pw, sizeof pw);
    conf_preview(b ? b + (from < got_len ? from : got_len) : NULL,
                 from < got_len ? got_len - from : 0, pg, sizeof pg);
    conf_fail(c,
              "%s: expected %zu bytes, got %zu bytes, first difference at "
              "offset %zu\n  expected (from offset %zu): %s\n"
              "  got      (from offset %zu): %s",
              what, want_len, got_len, i, from, pw, from, pg);
    return false;
}

bool conf_expect_stdout(conf_case *c, const char *what, const char *want,
                        const sbx_result *r)
{
    size_t len = 0;
    if (r == NULL)
        return false;
    const void *p = sbx_result_stdout(r, &len);
    return conf_expect_bytes(c, what, want, strlen(want), p, len);
}

bool conf_expect_stderr(conf_case *c, const char *what, const char *want,
                        const sbx_result *r)
{
    size_t len = 0;
    if (r == NULL)
        return false;
    const void *p = sbx_result_stderr(r, &len);
    return conf_expect_bytes(c, what, want, strlen(want), p, len);
}

bool conf_stdout_is(const sbx_result *r, const char *s)
{
    size_t len = 0;
    const void *p = sbx_result_stdout(r, &len);
    return len == strlen(s) && (len == 0 || memcmp(p, s, len) == 0);
}

void conf_token(char *out, size_t cap)
{
    static atomic_uint counter;
    unsigned n = atomic_fetch_add(&counter, 1);
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        ts.tv_nsec = 0;
    snprintf(out, cap, "c%ldx%ux%lx", (long)getpid(), n,
             (unsigned long)ts.tv_nsec);
}

void conf_fill_random(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t x = seed ? seed : UINT64_C(0x9e3779b97f4a7c15);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
}

sbx_sandbox *conf_multi_box(conf_kit *k, conf_case *c, bool *ok)
{
    *ok = true;
    if (!(k->caps & SBX_CAP_PERSISTENT))
        return NULL;
    sbx_sandbox *sb = conf_box(k, c, NULL, true);
    if (sb == NULL)
        *ok = false;
    return sb;
}

sbx_result *conf_multi_exec(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                            const sbx_exec_opts *x)
{
    return sb ? conf_exec(k, c, sb, x) : conf_run(k, c, NULL, x);
}
