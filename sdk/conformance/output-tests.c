/* sdk/conformance/output-tests.c - stdout/stderr separation, binary
 * output, output caps, stdin, streaming callback */
#include "config.h"

#include "kit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void t_stdout_stderr(conf_kit *k, conf_case *c)
{
    sbx_result *r = conf_run_shell(k, c, "echo out; echo err >&2");
    if (r == NULL)
        return;
    if (conf_expect_status(c, "'echo out; echo err >&2'", SBX_RUN_OK, r)) {
        conf_expect_stdout(c, "stdout", "out\n", r);
        conf_expect_stderr(c, "stderr", "err\n", r);
    }
    sbx_result_free(r);
}

static void t_binary_output(conf_kit *k, conf_case *c)
{
    /* printf with octal escapes for every byte value: NULs included. */
    char line[16 + 256 * 4];
    unsigned char want[256];
    size_t o = (size_t)snprintf(line, sizeof line, "printf '");
    for (int b = 0; b < 256; b++) {
        o += (size_t)snprintf(line + o, sizeof line - o, "\\%03o", b);
        want[b] = (unsigned char)b;
    }
    snprintf(line + o, sizeof line - o, "'");

    sbx_result *r = conf_run_shell(k, c, "printf 'a\\000b\\000\\000c'");
    if (r != NULL) {
        size_t len = 0;
        const void *p = sbx_result_stdout(r, &len);
        if (conf_expect_status(c, "printf with NULs", SBX_RUN_OK, r))
            conf_expect_bytes(c, "stdout of printf 'a\\000b\\000\\000c'",
                              "a\0b\0\0c", 6, p, len);
        sbx_result_free(r);
    }
    r = conf_run_shell(k, c, line);
    if (r != NULL) {
        size_t len = 0;
        const void *p = sbx_result_stdout(r, &len);
        if (conf_expect_status(c, "printf of bytes 0..255", SBX_RUN_OK, r))
            conf_expect_bytes(c, "stdout of bytes 0..255", want, sizeof want,
                              p, len);
        sbx_result_free(r);
    }
}

/* ---- output caps --------------------------------------------------------- */

#define CAP_BYTES (8 * MIB)
static const char pattern[] = "0123456789abcde\n"; /* what `yes` repeats */

/* The first @len bytes `yes 0123456789abcde` writes. */
static unsigned char *pattern_bytes(size_t len)
{
    unsigned char *p = malloc(len);
    if (p == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)pattern[i % 16];
    return p;
}

/* Run `yes | head -c @bytes` to @stream (1 or 2) under 8 MiB caps and
 * check what came back. */
static void output_cap_case(conf_kit *k, conf_case *c, int stream,
                            size_t bytes)
{
    bool over = bytes > CAP_BYTES;
    size_t want_len = over ? CAP_BYTES : bytes;
    char line[128];
    snprintf(line, sizeof line, "yes 0123456789abcde | head -c %zu%s", bytes,
             stream == 2 ? " >&2" : "");
    unsigned char *want = pattern_bytes(want_len);
    sbx_create_opts *o = conf_copts(k, c);
    sbx_exec_opts *x = conf_xshell(c, line);
    sbx_result *r = NULL;
    if (want == NULL) {
        conf_fail(c, "out of memory for %zu bytes", want_len);
        goto out;
    }
    if (o == NULL || x == NULL ||
        !conf_set_ok(c, "sbx_create_opts_set_limit(SBX_LIMIT_STDOUT, 8 MiB)",
                     sbx_create_opts_set_limit(o, SBX_LIMIT_STDOUT,
                                               CAP_BYTES)) ||
        !conf_set_ok(c, "sbx_create_opts_set_limit(SBX_LIMIT_STDERR, 8 MiB)",
                     sbx_create_opts_set_limit(o, SBX_LIMIT_STDERR,
                                               CAP_BYTES)))
        goto out;
    r = conf_run(k, c, o, x);
    if (r == NULL)
        goto out;
    size_t len = 0, other_len = 0;
    const void *got = stream == 1 ? sbx_result_stdout(r, &len)
                                  : sbx_result_stderr(r, &len);
    (void)(stream == 1 ? sbx_result_stderr(r, &other_len)
                       : sbx_result_stdout(r, &other_len));
    bool trunc = stream == 1 ? sbx_result_stdout_truncated(r)
                             : sbx_result_stderr_truncated(r);
    bool other_trunc = stream == 1 ? sbx_result_stderr_truncated(r)
                                   : sbx_result_stdout_truncated(r);
    const char *sname = stream == 1 ? "stdout" : "stderr";
    char what[200];
    snprintf(what, sizeof what, "%s of '%s'", sname, line);
    conf_expect_status(c, line, over ? SBX_RUN_OUTPUT_LIMIT : SBX_RUN_OK, r);
    conf_expect_bytes(c, what, want, want_len, got, len);
    snprintf(what, sizeof what, "%s_truncated", sname);
    conf_expect_int(c, what, over, trunc);
    snprintf(what, sizeof what, "bytes on the other stream");
    conf_expect_int(c, what, 0, (long long)other_len);
    conf_expect_int(c, "the other stream's truncated flag", 0, other_trunc);
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
    free(want);
}

static void t_output_limit_stdout(conf_kit *k, conf_case *c)
{
    output_cap_case(k, c, 1, 9 * MIB);
}

static void t_output_limit_stderr(conf_kit *k, conf_case *c)
{
    output_cap_case(k, c, 2, 9 * MIB);
}

static void t_output_below_limit(conf_kit *k, conf_case *c)
{
    output_cap_case(k, c, 1, CAP_BYTES - 1);
    output_cap_case(k, c, 2, CAP_BYTES - 1);
}

/* ---- stdin --------------------------------------------------------------- */

static void t_stdin_binary(conf_kit *k, conf_case *c)
{
    size_t len = MIB;
    unsigned char *data = malloc(len);
    sbx_create_opts *o = conf_copts(k, c);
    sbx_exec_opts *x = conf_xshell(c, "cat");
    sbx_result *r = NULL;
    if (data == NULL) {
        conf_fail(c, "out of memory for 1 MiB");
        goto out;
    }
    conf_fill_random(data, len, UINT64_C(0x5eed5eed12345678));
    /* Room above 1 MiB so the echo is never at a cap. */
    if (o == NULL || x == NULL ||
        !conf_set_ok(c, "sbx_create_opts_set_limit(SBX_LIMIT_STDOUT, 2 MiB)",
                     sbx_create_opts_set_limit(o, SBX_LIMIT_STDOUT, 2 * MIB)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_stdin(1 MiB)",
                     sbx_exec_opts_set_stdin(x, data, len)))
        goto out;
    r = conf_run(k, c, o, x);
    if (r == NULL)
        goto out;
    size_t got_len = 0;
    const void *got = sbx_result_stdout(r, &got_len);
    if (conf_expect_status(c, "cat of 1 MiB of stdin", SBX_RUN_OK, r))
        conf_expect_bytes(c, "stdout of cat", data, len, got, got_len);
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
    free(data);
}

/* A command that never reads its stdin must not turn into a sandbox
 * error (a broken pipe on the writing side is the provider's to absorb). */
static void t_stdin_unread(conf_kit *k, conf_case *c)
{
    size_t len = MIB;
    unsigned char *data = malloc(len);
    sbx_exec_opts *x = conf_xshell(c, "echo ignored");
    if (data == NULL) {
        conf_fail(c, "out of memory for 1 MiB");
        goto out;
    }
    conf_fill_random(data, len, 42);
    if (x == NULL || !conf_set_ok(c, "sbx_exec_opts_set_stdin(1 MiB)",
                                  sbx_exec_opts_set_stdin(x, data, len)))
        goto out;
    sbx_result *r = conf_run(k, c, NULL, x);
    if (r != NULL) {
        if (conf_expect_status(c, "1 MiB of stdin to 'echo ignored'",
                               SBX_RUN_OK, r))
            conf_expect_stdout(c, "stdout", "ignored\n", r);
        sbx_result_free(r);
    }
out:
    sbx_exec_opts_free(x);
    free(data);
}

static void t_stdin_empty(conf_kit *k, conf_case *c)
{
    /* Without stdin a command reading it sees EOF at once; a provider
     * that leaves it open hangs here until the timeout. */
    sbx_exec_opts *x = conf_xshell(c, "cat; echo \"status $?\"");
    if (x == NULL ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(10 s)",
                     sbx_exec_opts_set_timeout(x, 10 * SEC_NS))) {
        sbx_exec_opts_free(x);
        return;
    }
    sbx_result *r = conf_run(k, c, NULL, x);
    if (r != NULL) {
        if (conf_expect_status(c, "cat with no stdin", SBX_RUN_OK, r))
            conf_expect_stdout(c, "stdout of cat with no stdin", "status 0\n",
                               r);
        sbx_result_free(r);
    }
    sbx_exec_opts_free(x);
}

/* ---- streaming ----------------------------------------------------------- */

typedef struct sink {
    unsigned char *buf[3];
    size_t len[3];
    size_t calls;
    bool stop;     /* return non-zero after the first chunk */
    bool bad;      /* a stream number other than 1 or 2 */
} sink;

static int sink_write(void *ud, int stream, const void *data, size_t len)
{
    sink *s = ud;
    s->calls++;
    if (stream != SBX_STREAM_STDOUT && stream != SBX_STREAM_STDERR) {
        s->bad = true;
        return 0;
    }
    unsigned char *p = realloc(s->buf[stream], s->len[stream] + len + 1);
    if (p == NULL)
        return 1;
    memcpy(p + s->len[stream], data, len);
    s->buf[stream] = p;
    s->len[stream] += len;
    return s->stop ? 1 : 0;
}

static void t_stream_callback(conf_kit *k, conf_case *c)
{
    sink s = {0};
    sbx_exec_opts *x = conf_xshell(
        c, "for i in 1 2 3; do echo out$i; echo err$i >&2; done");
    if (x == NULL ||
        !conf_set_ok(c, "sbx_exec_opts_set_output_cb",
                     sbx_exec_opts_set_output_cb(x, sink_write, &s)))
        goto out;
    sbx_result *r = conf_run(k, c, NULL, x);
    if (r == NULL)
        goto out;
    size_t ol = 0, el = 0;
    const void *op = sbx_result_stdout(r, &ol);
    const void *ep = sbx_result_stderr(r, &el);
    conf_expect_status(c, "the loop", SBX_RUN_OK, r);
    conf_expect_true(c, "stream numbers are SBX_STREAM_STDOUT/STDERR", !s.bad);
    conf_expect_bytes(c, "stdout through the callback", "out1\nout2\nout3\n",
                      15, s.buf[1], s.len[1]);
    conf_expect_bytes(c, "stderr through the callback", "err1\nerr2\nerr3\n",
                      15, s.buf[2], s.len[2]);
    conf_expect_bytes(c, "collected stdout", "out1\nout2\nout3\n", 15, op, ol);
    conf_expect_bytes(c, "collected stderr", "err1\nerr2\nerr3\n", 15, ep, el);
    sbx_result_free(r);
out:
    sbx_exec_opts_free(x);
    free(s.buf[1]);
    free(s.buf[2]);
}

static void t_stream_stop(conf_kit *k, conf_case *c)
{
    sink s = {.stop = true};
    sbx_exec_opts *x = conf_xshell(c, "echo first; sleep 5; echo second");
    if (x == NULL ||
        !conf_set_ok(c, "sbx_exec_opts_set_output_cb",
                     sbx_exec_opts_set_output_cb(x, sink_write, &s)))
        goto out;
    sbx_result *r = conf_run(k, c, NULL, x);
    if (r == NULL)
        goto out;
    conf_expect_status(c, "a callback returning non-zero", SBX_RUN_OUTPUT_LIMIT,
                       r);
    size_t ol = 0;
    const char *op = sbx_result_stdout(r, &ol);
    if (ol >= 6 && memmem(op, ol, "second", 6) != NULL)
        conf_fail(c, "the command went on after the callback asked to stop "
                     "(\"second\" in stdout)");
    if (s.len[1] >= 6 && memmem(s.buf[1], s.len[1], "second", 6) != NULL)
        conf_fail(c, "the callback was called again after asking to stop");
    sbx_result_free(r);
out:
    sbx_exec_opts_free(x);
    free(s.buf[1]);
    free(s.buf[2]);
}

const conf_test conf_output_tests[] = {
    {"stdout_stderr_separate", 0, t_stdout_stderr,
     "'echo out; echo err >&2' gives exactly \"out\\n\" and \"err\\n\""},
    {"binary_output", 0, t_binary_output,
     "printf of NULs and of bytes 0..255 round-trips byte-exact"},
    {"output_limit_stdout", 0, t_output_limit_stdout,
     "9 MiB on stdout under an 8 MiB cap: exactly 8 MiB, truncated, "
     "status output_limit"},
    {"output_limit_stderr", 0, t_output_limit_stderr,
     "9 MiB on stderr under an 8 MiB cap: exactly 8 MiB, truncated, "
     "status output_limit"},
    {"output_below_limit", 0, t_output_below_limit,
     "8 MiB - 1 on either stream under an 8 MiB cap: complete, not "
     "truncated, status ok"},
    {"stdin_binary", SBX_CAP_STDIN, t_stdin_binary,
     "1 MiB of binary stdin echoed back by cat byte-exact"},
    {"stdin_unread", SBX_CAP_STDIN, t_stdin_unread,
     "1 MiB of stdin to a command that never reads it: status ok"},
    {"stdin_empty", 0, t_stdin_empty,
     "no stdin: cat sees EOF at once, exits 0, prints nothing"},
    {"stream_callback", SBX_CAP_STREAM, t_stream_callback,
     "the output callback sees every byte of each stream, in order"},
    {"stream_stop", SBX_CAP_STREAM, t_stream_stop,
     "a callback returning non-zero stops the command: status output_limit"},
    {NULL, 0, NULL, NULL},
};
