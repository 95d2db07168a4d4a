/* tests/hostile/setid-probe.c - a set-id program embedding libpolysandbox
 *
 * Usage: setid-probe CONFIG_DIR [COMMAND...]
 *
 * Runs COMMAND (`echo ok`) through the library with the configuration
 * directory it was given (its own choice, not its caller's), and prints
 * its standard output and status.
 * tests/hostile/setid.sh installs a copy set-user-ID root and runs it as
 * another user whose environment names a daemon of theirs
 * (POLYSANDBOX_LOCALD) and asks for debug logs (POLYSANDBOX_LOG): the
 * library must read neither (secure_getenv).  Linked with the core's
 * convenience library, so the set-id copy needs no library path.
 */
#include "config.h"

#include <stdio.h>

#include <polysandbox/sandbox.h>

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    sbx_result *r = NULL;
    const char *const echo[] = {"echo", "ok", NULL};
    const char *const *cmd = argc > 2 ? (const char *const *)argv + 2 : echo;

    if (argc < 2) {
        fprintf(stderr, "usage: setid-probe CONFIG_DIR [COMMAND...]\n");
        return 2;
    }
    if (sbx_ctx_new(&ctx, argv[1]) != SBX_OK) {
        fprintf(stderr, "setid-probe: %s\n", ctx ? sbx_error_message(sbx_ctx_last_error(ctx))
                                                 : "no context");
        sbx_ctx_free(ctx);
        return 1;
    }
    sbx_exec_opts *x = sbx_exec_opts_new();
    int rc = x ? sbx_exec_opts_set_argv(x, cmd) : SBX_E_NOMEM;
    if (rc == SBX_OK)
        rc = sbx_run(ctx, NULL, x, &r);
    if (rc == SBX_OK) {
        size_t n = 0;
        const void *out = sbx_result_stdout(r, &n);
        fwrite(out, 1, n, stdout);
        fprintf(stderr, "status %s\n", sbx_run_status_name(sbx_result_status(r)));
        if (sbx_result_error(r))
            fprintf(stderr, "error %s\n", sbx_result_error(r));
    } else {
        fprintf(stderr, "setid-probe: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
    }
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_ctx_free(ctx);
    return rc == SBX_OK ? 0 : 1;
}
