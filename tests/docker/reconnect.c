/* tests/docker/reconnect.c - one process, one sandbox in attach mode, and
 * its attach connection lost between execs and during one
 *
 * Usage: test-docker-reconnect DOCKER-COMMAND (run by reconnect.sh, which
 * makes sure a daemon and the test image are there).  Prints TAP.
 *   1. an exec works (the connection is opened at create);
 *   2. `docker restart` ends the connection and the server between execs:
 *      the next exec reconnects and works;
 *   3. `docker kill` during an exec: a sandbox error saying the exec
 *      server exited, within the exec's time (no hang);
 *   4. the next exec (container stopped): an error saying so.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"

/* A check with what to show when it fails (may be NULL). */
static void check(int cond, const char *desc, const char *why)
{
    if (!ok(cond, "%s", desc) && why)
        diag("%s", why);
}

/* Runs @shell in @sb; returns the result (or NULL) with its stdout in out. */
static sbx_result *run(sbx_sandbox *sb, const char *shell, uint64_t timeout_ns, char *out,
                       size_t cap)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_result *r = NULL;
    out[0] = '\0';
    if (!x || sbx_exec_opts_set_shell(x, shell) != SBX_OK ||
        sbx_exec_opts_set_timeout(x, timeout_ns) != SBX_OK ||
        sbx_sandbox_exec(sb, x, &r) != SBX_OK) {
        sbx_exec_opts_free(x);
        return NULL;
    }
    sbx_exec_opts_free(x);
    size_t len = 0;
    const char *o = sbx_result_stdout(r, &len);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, o ? o : "", len);
    out[len] = '\0';
    return r;
}

static const char *why(const sbx_result *r)
{
    const char *e = r ? sbx_result_error(r) : NULL;
    return e ? e : "(no error)";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test-docker-reconnect DOCKER\n");
        return 2;
    }
    const char *docker = argv[1];
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb = NULL;
    sbx_create_opts *co = sbx_create_opts_new();
    char out[256], cmd[512];
    if (!co || sbx_ctx_new(&ctx, NULL) != SBX_OK || sbx_create_opts_set_provider(co, "docker") != SBX_OK ||
        sbx_sandbox_create(ctx, co, &sb) != SBX_OK) {
        printf("Bail out! create: %s\n",
               ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "no context");
        sbx_create_opts_free(co);
        sbx_ctx_free(ctx);
        return 1;
    }
    sbx_create_opts_free(co);
    const char *id = sbx_sandbox_id(sb);
    tap_plan(4);
    diag("sandbox %s", id);

    sbx_result *r = run(sb, "echo one", 20000000000u, out, sizeof out);
    check(r && sbx_result_status(r) == SBX_RUN_OK && !strcmp(out, "one\n"), "an exec works",
       why(r));
    sbx_result_free(r);

    snprintf(cmd, sizeof cmd, "%s restart -t 0 %s >/dev/null", docker, id);
    if (system(cmd) != 0)
        printf("# %s failed\n", cmd);
    r = run(sb, "echo two", 20000000000u, out, sizeof out);
    check(r && sbx_result_status(r) == SBX_RUN_OK && !strcmp(out, "two\n"),
       "after a restart of the container, the next exec reconnects", why(r));
    sbx_result_free(r);

    /* Killed while the exec sleeps (a second after it started). */
    snprintf(cmd, sizeof cmd, "(sleep 1; %s kill %s >/dev/null) &", docker, id);
    if (system(cmd) != 0)
        printf("# %s failed\n", cmd);
    r = run(sb, "sleep 60", 120000000000u, out, sizeof out);
    check(r && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR && strstr(why(r), "exec server"),
       "the container killed during an exec: an error naming the exec server", why(r));
    sbx_result_free(r);

    r = run(sb, "echo three", 20000000000u, out, sizeof out);
    check(r && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR && strstr(why(r), "not running"),
       "the next exec: an error saying the sandbox is not running", why(r));
    sbx_result_free(r);

    sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);
    return tap_done();
}
