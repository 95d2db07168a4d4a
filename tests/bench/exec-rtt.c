/* tests/bench/exec-rtt.c - exec round trips in one running sandbox
 *
 * Usage: exec-rtt [-p PROVIDER] [-n EXECS] [-k] COMMAND [ARG...]
 *
 * Creates one persistent sandbox on PROVIDER (microvm by default), then
 * runs COMMAND in it EXECS times (10 by default) through the same
 * handle (an exit status other than 0 is fine: the command ran), each
 * timed from sbx_sandbox_exec's call to its return: what a
 * caller holding a running VM pays per exec (the channel to its agent
 * already open, no VM started).  Prints a line per exec, then the id:
 *
 *   exec I ms=T status=S
 *   id ID
 *
 * With -k the sandbox is left running (closed, not destroyed) for the
 * caller to time `polysandbox exec ID` against it and destroy it;
 * otherwise it is destroyed.  Exits 1 when the create or an exec failed
 * (its error on stderr), 2 on a usage error.  Used by
 * tests/bench/microvm.sh; needs the tests' environment
 * (POLYSANDBOX_CONFIG_DIR, _PROVIDER_PATH, _STATE_DIR).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    const char *provider = "microvm";
    long execs = 10;
    bool keep = false;
    int c, status = 0;

    while ((c = getopt(argc, argv, "p:n:k")) != -1) {
        switch (c) {
        case 'p': provider = optarg; break;
        case 'n': execs = atol(optarg); break;
        case 'k': keep = true; break;
        default: return 2;
        }
    }
    if (optind >= argc || execs < 1) {
        fprintf(stderr, "usage: exec-rtt [-p PROVIDER] [-n EXECS] [-k] COMMAND [ARG...]\n");
        return 2;
    }

    sbx_ctx *ctx = NULL;
    sbx_create_opts *co = NULL;
    sbx_sandbox *sb = NULL;
    if (sbx_ctx_new(&ctx, NULL) != SBX_OK || !(co = sbx_create_opts_new()) ||
        sbx_create_opts_set_provider(co, provider) != SBX_OK ||
        sbx_create_opts_set_persistent(co, true) != SBX_OK ||
        sbx_sandbox_create(ctx, co, &sb) != SBX_OK) {
        fprintf(stderr, "exec-rtt: create: %s\n",
                ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "no context");
        sbx_create_opts_free(co);
        sbx_ctx_free(ctx);
        return 1;
    }
    sbx_create_opts_free(co);

    for (long i = 0; i < execs && !status; i++) {
        sbx_exec_opts *x = sbx_exec_opts_new();
        sbx_result *r = NULL;
        if (!x || sbx_exec_opts_set_argv(x, (const char *const *)argv + optind) != SBX_OK) {
            sbx_exec_opts_free(x);
            fprintf(stderr, "exec-rtt: out of memory\n");
            status = 1;
            break;
        }
        double t0 = now_ms();
        int rc = sbx_sandbox_exec(sb, x, &r);
        double t1 = now_ms();
        /* The command ran and exited, whatever its code (the microvm
         * guest's cheapest command, its agent run again, exits 2). */
        if (rc != SBX_OK || !r ||
            (sbx_result_status(r) != SBX_RUN_OK &&
             sbx_result_status(r) != SBX_RUN_NONZERO_EXIT)) {
            fprintf(stderr, "exec-rtt: exec %ld: %s (%s)\n", i,
                    r && sbx_result_error(r) ? sbx_result_error(r)
                                             : sbx_error_message(sbx_ctx_last_error(ctx)),
                    r ? sbx_run_status_name(sbx_result_status(r)) : "no result");
            status = 1;
        } else {
            printf("exec %ld ms=%.1f status=%s\n", i, t1 - t0,
                   sbx_run_status_name(sbx_result_status(r)));
        }
        sbx_result_free(r);
        sbx_exec_opts_free(x);
    }
    printf("id %s\n", sbx_sandbox_id(sb));
    fflush(stdout);
    if (keep && !status)
        sbx_sandbox_close(sb);
    else
        sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);
    return status;
}
