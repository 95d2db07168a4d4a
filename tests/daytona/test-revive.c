/* tests/daytona/test-revive.c - a long-lived handle on a Daytona sandbox
 * that the service stopped meanwhile (auto-stop) starts it again on its
 * next use.  Driven by revive.sh with the fake running; the stop is made
 * by the command given as argv[1] with the sandbox id appended.
 * Prints TAP. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"


static int exec_echo(sbx_sandbox *sb, const char *word)
{
    const char *argv[] = {"echo", word, NULL};
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_result *r = NULL;
    size_t len = 0;
    int ok = 0;

    if (x && sbx_exec_opts_set_argv(x, argv) == SBX_OK &&
        sbx_sandbox_exec(sb, x, &r) == SBX_OK) {
        const char *out = sbx_result_stdout(r, &len);
        ok = sbx_result_status(r) == SBX_RUN_OK && len == strlen(word) + 1 &&
             !memcmp(out, word, strlen(word));
        if (!ok)
            printf("# status %d, stdout '%.*s', error: %s\n", (int)sbx_result_status(r),
                   (int)len, out, sbx_result_error(r) ? sbx_result_error(r) : "none");
    }
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    return ok;
}

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    sbx_create_opts *o = sbx_create_opts_new();
    sbx_sandbox *sb = NULL;
    char cmd[512];

    if (argc != 2 || !o)
        return 2;
    tap_plan(3);
    if (sbx_ctx_new(&ctx, NULL) != SBX_OK || sbx_create_opts_set_provider(o, "daytona") ||
        sbx_create_opts_set_persistent(o, true) || sbx_sandbox_create(ctx, o, &sb) != SBX_OK) {
        printf("Bail out! cannot create a daytona sandbox: %s\n",
               ctx && sbx_ctx_last_error(ctx) ? sbx_error_message(sbx_ctx_last_error(ctx)) : "?");
        return 1;
    }
    ok(exec_echo(sb, "before"), "exec before the stop");
    snprintf(cmd, sizeof cmd, "%s %s", argv[1], sbx_sandbox_id(sb));
    ok(system(cmd) == 0, "the service stops the sandbox");
    ok(exec_echo(sb, "after"), "exec on the same handle starts it again");
    sbx_sandbox_destroy(sb);
    sbx_create_opts_free(o);
    sbx_ctx_free(ctx);
    return tap_done();
}
