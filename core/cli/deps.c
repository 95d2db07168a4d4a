/* core/cli/deps.c - polysandbox run --deps: a Go program's modules,
 * fetched in its own sandbox before the build
 *
 * go.mod (and go.sum, when there is one) beside FILE go into the work
 * directory; `go mod download && go mod vendor` runs there first, with
 * the template's network (egress only: refused otherwise, before any
 * sandbox is made), then the program is built from ./vendor and run in
 * the same sandbox, which goes afterwards.  The caller's --env reaches
 * both (GOPROXY, GOSUMDB, GOPRIVATE...).
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* FILE goes along under a name of its own for the fetch: go mod vendor
 * keeps only the packages the module's own files import. */
#define DEPS_SOURCE "polysandbox_deps.go"
static const char *const fetch_argv[] = {
    "sh", "-c", "go mod download && go mod vendor; rc=$?; rm -f " DEPS_SOURCE "; exit $rc",
    NULL,
};

/* DIR/NAME of FILE's directory (NULL: FILE itself) into @x as @as; 0,
 * 1 when absent and @optional, else the exit status (reported). */
static int add_beside(const cli_req *req, const char *name, const char *as, bool optional,
                      sbx_exec_opts *x)
{
    char *copy = strdup(req->rest[0]), path[4096], *data = NULL;
    size_t len = 0;
    int e, rc;

    if (copy == NULL) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    if (name != NULL)
        snprintf(path, sizeof path, "%s/%s", dirname(copy), name);
    else
        snprintf(path, sizeof path, "%s", req->rest[0]);
    free(copy);
    e = cli_read_file(path, (size_t)1 << 20, &data, &len);   /* go.sum of thousands of modules */
    if (e == ENOENT && optional)
        return 1;
    if (e != 0) {
        cli_err("run: --deps reads %s beside FILE: %s: %s", name ? name : "FILE", path,
                e == EFBIG ? "file too large" : strerror(e));
        return CLI_EXIT_USAGE;
    }
    rc = sbx_exec_opts_add_file(x, as, data, len, 0644);
    free(data);
    if (rc != SBX_OK) {
        cli_err("run: --deps: %s: %s", path, sbx_strerror(rc));
        return CLI_EXIT_ERROR;
    }
    return 0;
}

/* The template FILE runs with, if it allows egress; else the exit
 * status (reported). */
static int deps_template(const cli_req *req, const sbx_ctx *ctx, const char **lang)
{
    const sbx_template *t = NULL;

    if (req->n_rest > 0 && req->code == NULL && req->shell == NULL && !req->argv_mode &&
        strcmp(req->rest[0], "-") != 0)
        t = req->lang ? sbx_ctx_find_template(ctx, req->lang)
                      : sbx_ctx_template_for_file(ctx, req->rest[0]);
    if (t == NULL)
        return cli_usage_error("run", "--deps needs a FILE of a Go template, with "
                               "go.mod beside it");
    *lang = sbx_template_name(t);
    if (!sbx_template_egress(t))
        return cli_usage_error("run", "--deps fetches modules over the network, which "
                               "template '%s' does not allow (network none; a template "
                               "with network = egress does)", *lang);
    if (req->network_set && req->network != SBX_NET_EGRESS)
        return cli_usage_error("run", "--deps fetches modules over the network: not "
                               "with --network %s",
                               req->network == SBX_NET_NONE ? "none" : "host");
    return -1;
}

/* The fetch's exec: go.mod, go.sum, the caller's env, module mode. */
static int fetch_opts(const cli_req *req, sbx_exec_opts **out)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    int rc;

    *out = x;
    if (x == NULL || sbx_exec_opts_set_argv(x, fetch_argv) != SBX_OK) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    if ((rc = add_beside(req, "go.mod", "go.mod", false, x)) > 1 ||
        (rc = add_beside(req, "go.sum", "go.sum", true, x)) > 1 ||
        (rc = add_beside(req, NULL, DEPS_SOURCE, false, x)) > 1 ||
        (rc = cli_req_add_env(req, x)) >= 0)
        return rc;
    if (sbx_exec_opts_add_env(x, "GO111MODULE", "on") != SBX_OK ||
        sbx_exec_opts_add_env(x, "GOFLAGS", "-mod=mod") != SBX_OK ||
        (req->timeout_ns && sbx_exec_opts_set_timeout(x, req->timeout_ns) != SBX_OK)) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    return -1;
}

/* A fetch that failed: its output on our stderr, its exit status. */
static int fetch_failed(const sbx_result *r)
{
    size_t n = 0;
    const void *out = sbx_result_stdout(r, &n);

    fwrite(out, 1, n, stderr);
    out = sbx_result_stderr(r, &n);
    fwrite(out, 1, n, stderr);
    cli_err("run: --deps: 'go mod download' failed (%s)",
            sbx_run_status_name(sbx_result_status(r)));
    int rc = cli_exit_status(r);
    return rc == CLI_EXIT_OK ? CLI_EXIT_FAIL : rc;
}

int cli_run_deps(const cli_req *req, const cli_global *g, sbx_ctx *ctx,
                 sbx_create_opts *co, sbx_exec_opts *xo)
{
    const char *lang = NULL;
    sbx_exec_opts *fx = NULL;
    sbx_sandbox *sb = NULL;
    sbx_result *r = NULL;
    int rc;

    if ((rc = deps_template(req, ctx, &lang)) >= 0 || (rc = fetch_opts(req, &fx)) >= 0)
        goto out;
    /* The sandbox has the code's template, and so its network. */
    if (req->template_name == NULL && sbx_create_opts_set_template(co, lang) != SBX_OK) {
        rc = cli_lib_error(ctx, SBX_E_NOMEM, "run");
        goto out;
    }
    if ((rc = sbx_sandbox_create(ctx, co, &sb)) != SBX_OK) {
        rc = cli_req_create_error(req, ctx, rc, "run");
        goto out;
    }
    if ((rc = cli_interrupt_begin(fx)) >= 0)
        goto out;
    rc = sbx_sandbox_exec(sb, fx, &r);
    cli_interrupt_end();
    if (rc != SBX_OK) {
        rc = cli_lib_error(ctx, rc, "run");
        goto out;
    }
    if (sbx_result_status(r) != SBX_RUN_OK) {
        rc = fetch_failed(r);
        goto out;
    }
    sbx_result_free(r);
    r = NULL;
    /* Built from ./vendor: no network needed past this point. */
    if (sbx_exec_opts_add_env(xo, "GO111MODULE", "on") != SBX_OK ||
        sbx_exec_opts_add_env(xo, "GOFLAGS", "-mod=vendor") != SBX_OK) {
        rc = cli_lib_error(ctx, SBX_E_NOMEM, "run");
        goto out;
    }
    if ((rc = cli_req_stdin(req, ctx, sbx_sandbox_provider(sb), xo)) >= 0 ||
        (rc = cli_interrupt_begin(xo)) >= 0)
        goto out;
    rc = sbx_sandbox_exec(sb, xo, &r);
    rc = rc != SBX_OK ? cli_lib_error(ctx, rc, "run") : cli_report_result(req, g, r);
out:
    cli_interrupt_end();
    if (r != NULL)
        sbx_result_free(r);
    if (sb != NULL)
        sbx_sandbox_destroy(sb);
    if (fx != NULL)
        sbx_exec_opts_free(fx);
    return rc;
}
