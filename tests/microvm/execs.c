/* tests/microvm/execs.c - several execs in one microvm sandbox (one boot)
 *
 * Usage: test-microvm-execs CONFIG_DIR.  Creates one sandbox on the
 * microvm provider and prints one line per exec for tests/microvm/run.sh:
 *
 *   NAME STATUS EXIT STDOUT|STDERR   (output with newlines as '/')
 *
 * Exits 0 when the sandbox was made, 1 otherwise (its error printed).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/sandbox.h>

static void flat(const char *s, size_t n, char *out, size_t cap)
{
    size_t j = 0;

    for (size_t i = 0; i < n && j + 1 < cap; i++)
        out[j++] = s[i] == '\n' ? '/' : s[i];
    out[j] = '\0';
}

static void show(sbx_sandbox *sb, const char *name, sbx_exec_opts *x)
{
    sbx_result *r = NULL;
    char o[256], e[256];
    size_t on = 0, en = 0;
    const char *so, *se;

    if (sbx_sandbox_exec(sb, x, &r) != SBX_OK || !r) {
        printf("%s error %s\n", name, r && sbx_result_error(r) ? sbx_result_error(r) : "exec");
        sbx_result_free(r);
        sbx_exec_opts_free(x);
        return;
    }
    so = sbx_result_stdout(r, &on);
    se = sbx_result_stderr(r, &en);
    flat(so ? so : "", so ? on : 0, o, sizeof o);
    flat(se ? se : "", se ? en : 0, e, sizeof e);
    printf("%s %s %d %s|%s\n", name, sbx_run_status_name(sbx_result_status(r)),
           sbx_result_exit_code(r), o, e);
    fflush(stdout);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
}

static sbx_exec_opts *argv_opts(const char *code)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    const char *argv[] = { "python3", "-c", code, NULL };

    if (x)
        sbx_exec_opts_set_argv(x, argv);
    return x;
}

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    sbx_create_opts *co;
    sbx_sandbox *sb = NULL;
    sbx_exec_opts *x;

    if (argc != 2) {
        fprintf(stderr, "usage: test-microvm-execs CONFIG_DIR\n");
        return 2;
    }
    if (sbx_ctx_new(&ctx, argv[1]) != SBX_OK) {
        printf("context error %s\n", ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "?");
        sbx_ctx_free(ctx);
        return 1;
    }
    co = sbx_create_opts_new();
    if (!co || sbx_create_opts_set_provider(co, "microvm") ||
        sbx_sandbox_create(ctx, co, &sb) != SBX_OK) {
        printf("create error %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        sbx_create_opts_free(co);
        sbx_ctx_free(ctx);
        return 1;
    }
    sbx_create_opts_free(co);

    x = sbx_exec_opts_new();
    if (x)
        sbx_exec_opts_set_code(x, "python", "print(6*7)", (size_t)-1);
    show(sb, "code", x);
    show(sb, "exit", argv_opts("import sys; sys.stderr.write('oops\\n'); sys.exit(3)"));
    x = argv_opts("import sys; print(sys.stdin.read().upper())");
    if (x)
        sbx_exec_opts_set_stdin(x, "abc", 3);
    show(sb, "stdin", x);
    x = argv_opts("import time; print('start', flush=True); time.sleep(60)");
    if (x)
        sbx_exec_opts_set_timeout(x, 2000000000ull);
    show(sb, "timeout", x);
    show(sb, "kernel", argv_opts("import os; print(os.uname().release)"));
    x = sbx_exec_opts_new();
    if (x) {
        const char *nf[] = { "no-such-command", NULL };
        sbx_exec_opts_set_argv(x, nf);
    }
    show(sb, "missing", x);
    sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);
    return 0;
}
