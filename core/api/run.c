/* core/api/run.c - sbx_run: create, exec, destroy in one call, taking a
 * warm sandbox from a pool when one matches
 *
 * Above core/run/ (sandboxes) and core/pool/ (pools), which it joins:
 * core/run/ knows nothing of pools, a pool creates its sandboxes through
 * the public API.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "run/sandbox-int.h"
#include "pool/pool.h"
#include "context.h"
#include "retry/retry.h"
#include "run/opts-int.h"
#include "run/result-int.h"
#include "clock.h"

/* The end of a run's sandbox: back to its pool, or destroyed. */
static int run_done(core_pool_lease *lease, sbx_sandbox *sb, bool healthy)
{
    if (!lease)
        return sbx_sandbox_destroy(sb);
    core_pool_release(lease, healthy);
    return SBX_OK;
}

/* One create + exec + destroy.  *exec_failed: the sandbox failed while the
 * command ran (not at create or destroy). */
/* A one-shot sandbox lives for one exec: unless the caller gave a
 * time-to-live, give it twice the run's time limit and a minute, so that
 * `polysandbox gc` reaps it should this process die mid-run.  @tmp is a
 * shallow copy of @copts (read-only use) when one is needed. */
static const sbx_create_opts *one_shot_opts(const sbx_ctx *ctx, const sbx_create_opts *copts,
                                            const sbx_exec_opts *xopts, sbx_create_opts *tmp)
{
    uint64_t wall;

    if (copts && copts->ttl_ns)
        return copts;
    wall = xopts->timeout_ns;
    if (!wall)
        wall = (copts && copts->limits[SBX_LIMIT_WALL]) ? copts->limits[SBX_LIMIT_WALL]
                                                        : ctx->cfg.limits[SBX_LIMIT_WALL];
    if (!wall)
        return copts;
    if (copts)
        *tmp = *copts;
    else
        memset(tmp, 0, sizeof(*tmp));
    tmp->ttl_ns = 2 * wall + UINT64_C(60000000000);
    return tmp;
}

static int run_once(sbx_ctx *ctx, const sbx_create_opts *copts, const sbx_exec_opts *xopts,
                    uint64_t deadline, sbx_result **out, bool *exec_failed)
{
    sbx_create_opts tmp;
    uint64_t t0 = core_now_ns(), t1;
    sbx_sandbox *sb = NULL;
    core_pool_lease *lease = NULL;
    sbx_result *r;
    bool backend_failed = false;
    int rc;

    *exec_failed = false;
    if (sbx_cancel_fired(xopts->cancel)) {
        if (!(r = core_result_new(copts && copts->provider ? copts->provider : "", "")))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        core_result_set_cancelled(r);
        *out = r;
        return SBX_OK;
    }
    /* Code whose template names images per provider is not served by a
     * pool of sandboxes made without that template (on the host's root). */
    const core_template_conf *ct = xopts->code && !(copts && copts->template_name)
                                   ? core_find_template(ctx, xopts->lang) : NULL;
    sb = ct && ct->n_images ? NULL
       : core_pool_take(ctx, copts, &lease);   /* NULL: no pool, or a miss */
    rc = SBX_OK;
    if (!sb) {
        const sbx_create_opts *o = one_shot_opts(ctx, copts, xopts, &tmp);
        if (xopts->code && !(o && o->template_name)) {
            if (o != &tmp) {
                if (o)
                    tmp = *o;
                else
                    memset(&tmp, 0, sizeof tmp);
            }
            tmp.code_lang = xopts->lang;
            o = &tmp;
        }
        rc = core_sandbox_create(ctx, o, deadline, &sb, &backend_failed);
    }
    t1 = core_now_ns();
    if (rc != SBX_OK) {
        const struct sbx_error *e = core_error_tls();
        if (!backend_failed)
            return rc;
        /* The sandbox failed, not the code: a result, never a verdict. */
        if (!(r = core_result_new(e->provider, "")))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        core_result_set_sandbox_error(r, e->code, e->message);
        r->timing[SBX_TIMING_CREATE] = t1 - t0;
        r->timing[SBX_TIMING_TOTAL] = t1 - t0;
        core_error_clear();
        *out = r;
        return SBX_OK;
    }
    if (!(r = core_result_new(sbx_sandbox_provider(sb), sbx_sandbox_id(sb)))) {
        run_done(lease, sb, true);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    r->timing[SBX_TIMING_CREATE] = t1 - t0;
    /* A hit says so: its create time is the wait for a ready sandbox.
     * Without memory to say it, the run goes on unnamed. */
    r->pool = lease ? strdup(core_pool_lease_name(lease)) : NULL;
    rc = core_sandbox_exec(sb, xopts, r);
    if (rc != SBX_OK) {
        struct sbx_error saved = *core_error_tls();
        run_done(lease, sb, false);
        sbx_result_free(r);
        *core_error_tls() = saved;
        return rc;
    }
    *exec_failed = r->status == SBX_RUN_SANDBOX_ERROR;
    if (run_done(lease, sb, r->status != SBX_RUN_SANDBOX_ERROR) != SBX_OK &&
        r->status != SBX_RUN_SANDBOX_ERROR)
        core_result_set_sandbox_error(r, core_error_tls()->code, core_error_tls()->message);
    core_error_clear();
    r->timing[SBX_TIMING_TOTAL] = core_now_ns() - t0;
    *out = r;
    return SBX_OK;
}

/* May a run whose sandbox failed mid-exec run again on a fresh sandbox?
 * The failed sandbox is thrown away, so only effects outside it matter:
 * none without network (host, or a template's egress), and none the caller saw if no output reached its
 * callback.  The code must be retryable too (a dropped stream, a 5xx). */
static bool run_again_safe(const sbx_ctx *ctx, const sbx_create_opts *c,
                           const sbx_exec_opts *x, const sbx_result *r)
{
    /* The template's egress, unless the request narrowed it. */
    const sbx_template *t = sbx_ctx_find_template(ctx, c && c->template_name ? c->template_name
                                                    : x->code ? x->lang : NULL);
    bool egress = c && c->network_set ? c->network == SBX_NET_EGRESS : sbx_template_egress(t);

    if (r->status != SBX_RUN_SANDBOX_ERROR || !core_retryable(r->error_code))
        return false;
    if (x->cb && (r->out.len || r->err.len))
        return false;
    /* Streamed stdin or signals were read: another run would not get them. */
    if (x->has_stdin_fd || x->has_signal_fd)
        return false;
    return !(c && c->network == SBX_NET_HOST) && !egress;
}

int sbx_run(sbx_ctx *ctx, const sbx_create_opts *copts, const sbx_exec_opts *xopts,
            sbx_result **out)
{
    uint64_t deadline;
    core_retry rt;
    bool exec_failed;
    int rc;

    core_error_clear();
    if (!ctx || !out || !xopts)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_run: NULL argument");
    *out = NULL;
    if (!xopts->argv && !xopts->code)
        return core_error_set(SBX_E_INVAL, NULL, "nothing to run: give a command or code");
    if (xopts->code && !core_find_template(ctx, xopts->lang))
        return SBX_E_NOT_FOUND;
    deadline = core_retry_deadline(ctx);
    core_retry_begin(&rt, ctx, NULL, deadline);
    for (;;) {
        sbx_result *r;

        rc = run_once(ctx, copts, xopts, deadline, out, &exec_failed);
        if (rc != SBX_OK || !exec_failed || !run_again_safe(ctx, copts, xopts, *out))
            return rc;
        r = *out;
        rt.p = sbx_ctx_find_provider(ctx, r->provider);
        core_error_set(r->error_code, r->provider, "%s", r->error ? r->error : "");
        core_error_tls()->retry_after_ns = r->retry_after_ns;
        if (!core_retry_again(&rt, r->error_code)) {
            /* Keep the result, saying how often it was tried. */
            char *msg = strdup(core_error_tls()->message);
            if (msg) {
                free(r->error);
                r->error = msg;
            }
            core_error_clear();
            return SBX_OK;
        }
        core_error_clear();
        sbx_result_free(r);
        *out = NULL;
    }
}
