/* core/cli/cmd-run.c - polysandbox run: create + exec + destroy */
#include "config.h"

#include <stdio.h>

#include "cli.h"

static void run_help(void)
{
    fputs(
"Usage: polysandbox run [OPTIONS] FILE|- [ARGS...]\n"
"       polysandbox run [OPTIONS] 'SHELL LINE'\n"
"       polysandbox run [OPTIONS] COMMAND [ARGS...]\n"
"       polysandbox run [OPTIONS] -c CODE --lang LANG [ARGS...]\n"
"       polysandbox run [OPTIONS] --shell LINE\n"
"       polysandbox run [OPTIONS] -- COMMAND [ARGS...]\n"
"Run code or a command in a new sandbox, then destroy the sandbox.\n"
"The first word is a FILE when it is '-', an existing file or a name with\n"
"a template's extension (its language from the extension unless --lang is\n"
"given); else a single word with a blank or a shell character ;|&<>()$`'\"\\*?\n"
"is a shell line for /bin/sh -c ('run \"python3 -c 'print(1)'\"'), and\n"
"anything else is a command and its arguments ('run ls -l').  '--' or\n"
"--shell say which without guessing.\n"
"\n"
"What to run:\n"
"  -c, --code CODE        source code in the language given by --lang\n"
"      --lang LANG        the language template (see 'polysandbox templates')\n"
"  -s, --shell LINE       a command line for /bin/sh -c\n"
"  --                     the rest is a command and its arguments\n"
"\n"
"Execution:\n"
"  -e, --env KEY=VALUE    set a variable (KEY alone: take ours, if set)\n"
"      --cwd DIR          working directory inside the sandbox\n"
"      --file LOCAL[:REMOTE]  copy a file into the sandbox first\n"
"  -i, --stdin            pass our standard input to the program, as it\n"
"                         comes where the provider can stream it\n"
"      --json             print the result as one JSON object\n"
"      --artifacts DIR    save the files of the template's artifacts\n"
"                         directory under DIR (never overwriting one)\n"
"\n"
"Sandbox and limits:\n",
        stdout);
    fputs(cli_help_sandbox, stdout);
    fputs(
"      --keep             keep the sandbox (persistent) and print its id on\n"
"                         stderr, for 'polysandbox exec ID'\n"
"      --reuse            run in our sandbox carrying every --label (created,\n"
"                         and kept, when there is none)\n"
"      --deps             Go: fetch the modules of the go.mod (and go.sum)\n"
"                         beside FILE in the sandbox before the build\n"
"                         (go mod download, go mod vendor); only where\n"
"                         the template allows network = egress\n"
"  -t, --timeout DURATION wall-clock limit (e.g. 500ms, 10s, 2m)\n", stdout);
    fputs(cli_help_limits, stdout);
    fputs(
"\n"
"The program reads an empty standard input unless -i is given (as with\n"
"docker run); FILE '-' reads the code itself from our standard input.\n"
"With -i, a provider with the stdin_stream capability (local, docker,\n"
"kubernetes) gets each line as it comes and our end of file closes the\n"
"program's stdin; others get it whole once we reach end of file.\n"
"SIGINT, SIGTERM or SIGHUP (the terminal hung up) cancels the program and\n"
"its sandbox (exit 128+N).\n"
"Exit status: the program's own; 128+N when killed by signal N; 124 on a\n"
"time limit; 137 on the memory limit; 141 on the output limit; 125 on a\n"
"sandbox error; 126/127 when the command cannot run; 2 on bad usage and\n"
"on the caller's mistakes (an unknown language, a limit above its maximum,\n"
"a --cwd that is not there).\n",
        stdout);
}

/* --keep and --reuse: one exec in a persistent sandbox that stays. */
static int run_kept(cli_req *req, const cli_global *g, sbx_ctx *ctx,
                    const sbx_create_opts *co, sbx_exec_opts *xo)
{
    sbx_sandbox *sb = NULL;
    sbx_result *r = NULL;
    bool created = true;
    int rc = req->reuse ? sbx_sandbox_get_or_create(ctx, co, &sb, &created)
                        : sbx_sandbox_create(ctx, co, &sb);

    if (rc != SBX_OK)
        return cli_lib_error(ctx, rc, "run");
    /* said before the program's output ends, whatever -q says: a sandbox
     * nobody knows the id of would be left to its time-to-live */
    cli_err("%s sandbox %s on provider %s", created ? "keeping" : "reusing",
            sbx_sandbox_id(sb), sbx_sandbox_provider(sb));
    if ((rc = cli_req_stdin(req, ctx, sbx_sandbox_provider(sb), xo)) >= 0 ||
        (rc = cli_interrupt_begin(xo)) >= 0) {
        sbx_sandbox_close(sb);
        return rc;
    }
    rc = sbx_sandbox_exec(sb, xo, &r);
    if (rc != SBX_OK)
        rc = cli_lib_error(ctx, rc, "run");
    else
        rc = cli_report_result(req, g, r);
    if (r != NULL)
        sbx_result_free(r);
    sbx_sandbox_close(sb);
    return rc;
}

int cli_cmd_run(cli_global *g, int argc, char **argv)
{
    cli_req req = { .cmd = "run", .provider = g->provider };
    sbx_ctx *ctx = NULL;
    sbx_create_opts *co = NULL;
    sbx_exec_opts *xo = NULL;
    sbx_result *r = NULL;
    int rc = cli_req_parse(&req, CLI_OPT_EXEC | CLI_OPT_CREATE | CLI_OPT_RUN,
                           argc, argv, run_help);

    if (rc >= 0)
        goto out;
    if (req.reuse && req.n_labels == 0) {
        rc = cli_usage_error("run", "--reuse needs at least one --label "
                             "KEY=VALUE to find the sandbox by");
        goto out;
    }
    if (req.deps && (req.reuse || req.keep)) {
        rc = cli_usage_error("run", "--deps runs in a sandbox of its own, not with "
                             "--keep or --reuse");
        goto out;
    }
    if ((req.reuse || req.keep) && req.fallback != NULL) {
        rc = cli_usage_error("run", "--fallback applies to a run's own "
                             "sandbox, not with --keep or --reuse");
        goto out;
    }
    rc = CLI_EXIT_ERROR;
    if ((ctx = cli_ctx_new(g)) == NULL || !cli_provider_ok(ctx, req.provider) ||
        !cli_providers_ok(ctx, req.fallback))
        goto out;
    co = sbx_create_opts_new();
    xo = sbx_exec_opts_new();
    if (co == NULL || xo == NULL) {
        cli_err("out of memory");
        goto out;
    }
    req.persistent = req.keep || req.reuse;
    if (!cli_req_create_opts(&req, co))
        goto out;
    if ((rc = cli_req_exec_opts(&req, ctx, true, xo)) >= 0)
        goto out;
    if (req.persistent) {
        rc = run_kept(&req, g, ctx, co, xo);
        goto out;
    }
    if (req.deps) {
        rc = cli_run_deps(&req, g, ctx, co, xo);
        goto out;
    }
    /* -i streams when the provider the run starts on can take it; one it
     * falls back to that cannot refuses before reading any of it */
    if ((rc = cli_req_stdin(&req, ctx, req.provider ? req.provider
                                       : sbx_ctx_default_provider(ctx), xo)) >= 0 ||
        (rc = cli_interrupt_begin(xo)) >= 0)
        goto out;
    rc = sbx_run(ctx, co, xo, &r);
    if (rc != SBX_OK && cli_stdin_refused(ctx, rc) && !cli_interrupted()) {
        cli_interrupt_end(); /* so that SIGINT stops the read at once */
        if ((rc = cli_req_stdin(&req, ctx, NULL, xo)) >= 0 ||
            (rc = cli_interrupt_begin(xo)) >= 0)
            goto out;
        rc = sbx_run(ctx, co, xo, &r);
    }
    if (rc != SBX_OK) {
        rc = cli_req_create_error(&req, ctx, rc, "run");
        goto out;
    }
    rc = cli_report_result(&req, g, r);
out:
    cli_interrupt_end();
    if (r != NULL)
        sbx_result_free(r);
    if (xo != NULL)
        sbx_exec_opts_free(xo);
    if (co != NULL)
        sbx_create_opts_free(co);
    sbx_ctx_free(ctx);
    cli_req_free(&req);
    return rc;
}
