/* core/run/sandbox.c - sandboxes: provider choice, limits, create, exec, destroy */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/image.h>
#include <polysandbox/provider.h>

#include "opts-int.h"
#include "result-int.h"
#include "retry/retry.h"
#include "error.h"
#include "limit-names.h"
#include "strv.h"
#include "labels.h"
#include "conf.h"
#include "config/config-load.h"
#include "config/unenforced.h"
#include "run/cancel-int.h"
#include "run/id-hint.h"
#include "run/trail.h"
#include "run/template-int.h"
#include "run/artifacts.h"
#include "run/sandbox-int.h"
#include "run/orphans.h"
#include "context.h"
#include "clock.h"
#include "provider-int.h"

struct sbx_sandbox {
    sbx_ctx *ctx;
    struct sbx_provider *p;
    void *h;                            /* the provider's handle */
    char id[SBX_ID_MAX];
    uint64_t limits[SBX_LIMIT_COUNT];   /* resolved */
    pthread_mutex_t lock;               /* one call on a sandbox at a time */
    const core_template_conf *tmpl;     /* its template (zygote), or NULL */
    uint64_t unenforced;                /* SBX_LIMIT_BIT_* it runs without */
    char *unenforced_why;               /* and why, or NULL */
    bool refused;                       /* opened, but unenforced_limits forbids it */
    bool kept;                          /* persistent: may have an id hint */
};

/* ---- limits --------------------------------------------------------------- */

static int resolve_limits(const sbx_ctx *ctx, const sbx_create_opts *o,
                          uint64_t out[SBX_LIMIT_COUNT])
{
    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        uint64_t v = (o && o->limits[i]) ? o->limits[i] : ctx->cfg.limits[i];
        uint64_t max = ctx->cfg.max_limits[i];
        if (max && v > max)
            return core_error_set(SBX_E_LIMIT, NULL,
                                  "%s limit %llu is above the maximum %llu "
                                  "(limits.max_%s in polysandbox.ini)",
                                  core_limit_key((sbx_limit)i), (unsigned long long)v,
                                  (unsigned long long)max, core_limit_key((sbx_limit)i));
        out[i] = v;
    }
    return SBX_OK;
}

static void limits_to_v1(const uint64_t l[SBX_LIMIT_COUNT], sbx_limits_v1 *v)
{
    v->wall_ns = l[SBX_LIMIT_WALL];
    v->cpu_ns = l[SBX_LIMIT_CPU];
    v->memory_bytes = l[SBX_LIMIT_MEMORY];
    v->pids = l[SBX_LIMIT_PIDS];
    v->nofile = l[SBX_LIMIT_NOFILE];
    v->fsize_bytes = l[SBX_LIMIT_FSIZE];
    v->disk_bytes = l[SBX_LIMIT_DISK];
    v->stdout_bytes = l[SBX_LIMIT_STDOUT];
    v->stderr_bytes = l[SBX_LIMIT_STDERR];
}

/* ---- templates ------------------------------------------------------------ */

const core_template_conf *core_find_template(const sbx_ctx *ctx, const char *name)
{
    char known[512] = "";
    size_t off = 0;

    for (size_t i = 0; i < ctx->cfg.n_templates; i++)
        if (!strcmp(ctx->cfg.templates[i].name, name))
            return &ctx->cfg.templates[i];
    for (size_t i = 0; i < ctx->cfg.n_templates && off < sizeof known; i++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? ", " : "",
                                ctx->cfg.templates[i].name);
    core_error_set(SBX_E_NOT_FOUND, NULL, "no language template '%s' (known: %s)", name,
                   off ? known : "none; see templates.d/");
    return NULL;
}

/* ---- create --------------------------------------------------------------- */

/* Labels every sandbox carries so it can be found again (core/labels.c). */
static int add_core_labels(core_kvlist *labels, const sbx_create_opts *o,
                           const char *template_name)
{
    char owner[320], num[32];
    time_t now = time(NULL);

    core_owner(owner, sizeof owner);    /* what sbx_gc looks for */
    if (core_kvlist_add(labels, CORE_LABEL_OWNER, owner))
        return SBX_E_NOMEM;
    snprintf(num, sizeof num, "%lld", (long long)now);
    if (core_kvlist_add(labels, CORE_LABEL_CREATED, num))
        return SBX_E_NOMEM;
    if (o && o->ttl_ns) {
        snprintf(num, sizeof num, "%lld", (long long)now + (long long)(o->ttl_ns / 1000000000u));
        if (core_kvlist_add(labels, CORE_LABEL_EXPIRES, num))
            return SBX_E_NOMEM;
    }
    if (template_name && core_kvlist_add(labels, CORE_LABEL_TEMPLATE, template_name))
        return SBX_E_NOMEM;
    /* What sbx_sandbox_get_or_create looks for: a one-shot sandbox of
     * another process's run is never handed out. */
    if (o && o->persistent && core_kvlist_add(labels, CORE_LABEL_PERSISTENT, "1"))
        return SBX_E_NOMEM;
    return SBX_OK;
}

static sbx_sandbox *sandbox_alloc(sbx_ctx *ctx, struct sbx_provider *p)
{
    sbx_sandbox *sb = calloc(1, sizeof *sb);

    if (!sb) {
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (pthread_mutex_init(&sb->lock, NULL) != 0) {
        free(sb);
        core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
        return NULL;
    }
    sb->ctx = ctx;
    sb->p = p;
    return sb;
}

static void sandbox_free(sbx_sandbox *sb)
{
    pthread_mutex_destroy(&sb->lock);
    free(sb->unenforced_why);
    free(sb);
}

/* Report a provider failure, filling in a message when the provider left
 * none (a provider bug the conformance kit flags). */
int core_provider_failed(const struct sbx_provider *p, const char *op, int rc)
{
    struct sbx_error *e = core_error_tls();

    if (rc == SBX_OK)
        rc = SBX_E_INTERNAL;
    if (e->code == SBX_OK || e->message[0] == '\0')
        core_error_set(rc, p->name, "provider '%s': %s failed (%s) without an error message",
                       p->name, op, sbx_strerror(rc));
    else if (e->code != rc)
        e->code = rc;
    return rc;
}

/* The root of pulled image @image for @p into @root (malloc'd); errors
 * name the provider and keep the store's reason and advice (not pulled:
 * SBX_E_NOT_FOUND, a bad name: SBX_E_INVAL, no images: SBX_E_NOTSUP). */
static int image_root_for(sbx_ctx *ctx, const struct sbx_provider *p, const char *image,
                          char **root)
{
    int rc = sbx_image_root(ctx, image, root);
    if (rc == SBX_OK)
        return SBX_OK;
    char why[sizeof core_error_tls()->message];
    snprintf(why, sizeof why, "%s", core_error_tls()->message);
    return core_error_set(rc, p->name, "provider %s: %s", p->name, why);
}

/* Whether the sandbox gets egress: its template's policy, which the
 * request may narrow (none) but never widen; refused on a provider that
 * could not honour it rather than run without it. */
static int network_egress(const struct sbx_provider *p, const sbx_create_opts *o,
                          const core_template_conf *t, int *egress)
{
    bool allowed = t && t->egress;
    bool asked = o && o->network_set ? o->network == SBX_NET_EGRESS : allowed;

    *egress = 0;
    if (asked && !allowed)
        return t ? core_error_set(SBX_E_PERM, p->name, "network egress asked, but template "
                                  "'%s' allows network none: a run cannot widen its "
                                  "template's network (its network = egress would)", t->name)
                 : core_error_set(SBX_E_PERM, p->name, "network egress asked without a "
                                  "template: only a template with network = egress allows it");
    if (asked && !(p->desc.capabilities & SBX_CAP_EGRESS))
        return core_error_set(SBX_E_NOTSUP, p->name, "provider %s cannot give template '%s' "
                              "its network = egress (no egress capability): refused rather "
                              "than run without it", p->name, t->name);
    *egress = asked;
    return SBX_OK;
}

/* Create on one provider.  *backend_failed tells the provider's own
 * failure (worth a fallback, and a sandbox error in sbx_run) from a bad
 * request. */
static int create_on(sbx_ctx *ctx, struct sbx_provider *p, const sbx_create_opts *o,
                     const uint64_t limits[SBX_LIMIT_COUNT],
                     const core_template_conf *tmpl, const core_template_conf *code_tmpl,
                     sbx_sandbox **out, bool *backend_failed)
{
    sbx_create_spec_v1 spec;
    core_kvlist labels = {0}, env = {0};
    sbx_sandbox *sb;
    /* Either kind takes an image as a root directory from the store. */
    bool store_root = p->desc.flags & (SBX_PROVIDER_F_HOST_ROOT | SBX_PROVIDER_F_IMAGE_ROOT);
    int rc;

    *backend_failed = false;
    /* The request's image, else its template's, else the image.PROVIDER of
     * the code's template (its plain image stays the --template's).  All
     * but a template's plain image were asked of this provider: one that
     * cannot run them refuses them. */
    bool named = false;
    const char *image = (o && o->image) ? o->image
                      : tmpl ? core_template_image(tmpl, p->name, store_root, &named)
                      : core_template_image(code_tmpl, p->name, true, &named);
    bool asked = (o && o->image) || named;
    char *root = NULL;
    /* A provider that takes a root directory runs an image name in the
     * image's root from the store: one never pulled is refused, never
     * ignored. */
    if (store_root && image && image[0] != '/') {
        if ((rc = image_root_for(ctx, p, image, &root)) != SBX_OK)
            return rc;
        image = root;
    }
    if (!(sb = sandbox_alloc(ctx, p))) {
        free(root);
        return SBX_E_NOMEM;
    }
    memcpy(sb->limits, limits, sizeof sb->limits);
    sb->tmpl = tmpl;
    rc = add_core_labels(&labels, o, tmpl ? tmpl->name : NULL);
    for (size_t i = 0; rc == SBX_OK && o && i < o->labels.n; i++)
        rc = core_kvlist_add(&labels, o->labels.items[i].key, o->labels.items[i].value);
    if (rc == SBX_OK)
        rc = core_template_env_add(p, tmpl, &env);
    for (size_t i = 0; rc == SBX_OK && o && i < o->env.n; i++)
        rc = core_kvlist_add(&env, o->env.items[i].key, o->env.items[i].value);
    if (rc != SBX_OK) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto fail;
    }
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.template_name = tmpl ? tmpl->name : NULL;
    spec.image = image;
    spec.image_explicit = image && asked;
    limits_to_v1(limits, &spec.limits);
    spec.network = o && o->network == SBX_NET_HOST ? SBX_NET_HOST : SBX_NET_NONE;
    if ((rc = network_egress(p, o, tmpl ? tmpl : code_tmpl, &spec.egress)) != SBX_OK)
        goto fail;
    spec.persistent = o && o->persistent;
    spec.env = env.items;
    spec.n_env = env.n;
    spec.labels = labels.items;
    spec.n_labels = labels.n;
    spec.ttl_ns = o ? o->ttl_ns : 0;

    core_error_clear();
    core_unenforced_begin(limits, false);
    /* Refused before the provider is asked for anything. */
    rc = core_unenforced_network(ctx, p, spec.network);
    if (rc == SBX_OK)
        rc = p->ops.create(p->pctx, &spec, &sb->h, sb->id);
    sb->unenforced = core_unenforced_end(&sb->unenforced_why);
    free(root);
    root = NULL;
    if (rc != SBX_OK) {
        *backend_failed = true;
        rc = core_provider_failed(p, "create", rc);
        goto fail;
    }
    sb->id[SBX_ID_MAX - 1] = '\0';
    /* A provider that went on after the refusal: nothing of the caller's
     * ran in it yet, so it goes. */
    if (sb->unenforced & ~core_unenforced_ok(ctx, p)) {
        struct sbx_error saved;
        core_unenforced_refuse(p, sb->unenforced & ~core_unenforced_ok(ctx, p), limits,
                               sb->unenforced_why);
        saved = *core_error_tls();
        p->ops.destroy(p->pctx, sb->h);
        *core_error_tls() = saved;
        *backend_failed = true;
        rc = SBX_E_PERM;
        goto fail;
    }
    core_kvlist_free(&labels);
    core_kvlist_free(&env);
    /* Kept after we exit: say where, so opening it by id needs no search. */
    if (spec.persistent && p->ops.attach) {
        core_id_hint_put(ctx, p->name, sb->id);
        sb->kept = true;
    }
    *out = sb;
    return SBX_OK;
fail:
    free(root);
    core_kvlist_free(&labels);
    core_kvlist_free(&env);
    sandbox_free(sb);
    return rc;
}

/* Create on @p with retries, if its breaker lets the call through. */
static int create_retrying(sbx_ctx *ctx, struct sbx_provider *p, const sbx_create_opts *o,
                           const uint64_t limits[SBX_LIMIT_COUNT],
                           const core_template_conf *tmpl, const core_template_conf *code_tmpl,
                           uint64_t deadline, sbx_sandbox **out, bool *backend_failed)
{
    core_retry rt;
    bool trial;
    int rc;

    *backend_failed = true;     /* an open breaker: go down the chain */
    if ((rc = core_breaker_acquire(ctx, p, &trial)) != SBX_OK)
        return rc;
    core_retry_begin(&rt, ctx, p, deadline);
    do
        rc = create_on(ctx, p, o, limits, tmpl, code_tmpl, out, backend_failed);
    while (rc != SBX_OK && *backend_failed && core_retry_again(&rt, rc));
    core_breaker_record(ctx, p, trial, rc, *backend_failed);
    return rc;
}

/* The providers to try, in order: the named one (else the default),
 * then the options' fallback list when they set one; else the named one
 * alone, or the default followed by the [core] fallback chain. */
static size_t candidates(const sbx_ctx *ctx, const sbx_create_opts *o,
                         const char **list, size_t max)
{
    size_t n = 0;
    const char *first = (o && o->provider) ? o->provider : sbx_ctx_default_provider(ctx);
    char *const *chain = (o && o->fallback) ? o->fallback : ctx->cfg.fallback;

    if (first)
        list[n++] = first;
    if (o && o->provider && !o->fallback)
        return n;
    for (char *const *f = chain; f && *f && n < max; f++) {
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup = dup || !strcmp(list[i], *f);
        if (!dup)
            list[n++] = *f;
    }
    return n;
}

int core_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *o, uint64_t deadline,
                          sbx_sandbox **out, bool *backend_failed)
{
    uint64_t limits[SBX_LIMIT_COUNT];
    const core_template_conf *tmpl = NULL;
    const char *names[16];
    size_t n;
    int rc = SBX_E_NOT_FOUND;

    *backend_failed = false;
    if (resolve_limits(ctx, o, limits) != SBX_OK)
        return SBX_E_LIMIT;
    if (o && o->template_name && !(tmpl = core_find_template(ctx, o->template_name)))
        return SBX_E_NOT_FOUND;
    /* (sbx_run checked the code's template is there) */
    const core_template_conf *code_tmpl = o && o->code_lang ? core_find_template(ctx, o->code_lang)
                                                            : NULL;
    n = candidates(ctx, o, names, sizeof names / sizeof names[0]);
    if (n == 0)
        return core_error_set(SBX_E_PROVIDER_UNAVAILABLE, NULL,
                              "no provider is ready (see 'polysandbox providers')");
    for (size_t i = 0; i < n; i++) {
        struct sbx_provider *p = core_provider_get(ctx, names[i]);
        if (!p) {
            rc = core_error_tls()->code;
            if (n == 1)
                return rc;
            continue;
        }
        uint64_t t0 = core_now_ns();
        rc = create_retrying(ctx, p, o, limits, tmpl, code_tmpl, deadline, out, backend_failed);
        if (rc == SBX_OK || !*backend_failed)
            return rc;
        if (i + 1 < n)  /* left behind for the next: its time and why, for eval */
            core_trail_add(p->name, core_now_ns() - t0, core_error_tls()->message);
    }
    return rc;
}

int sbx_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *opts, sbx_sandbox **out)
{
    bool backend_failed;

    core_error_clear();
    if (!ctx || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_create: NULL argument");
    *out = NULL;
    return core_sandbox_create(ctx, opts, core_retry_deadline(ctx), out, &backend_failed);
}

/* Sandbox ids come from users on command lines: keep them to a safe set. */
static int check_id(const char *id)
{
    size_t n = id ? strlen(id) : 0;

    if (n == 0 || n >= SBX_ID_MAX)
        return core_error_set(SBX_E_INVAL, NULL, "sandbox id is empty or too long");
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return core_error_set(SBX_E_INVAL, NULL,
                                  "sandbox id '%s' has characters outside [A-Za-z0-9._-]", id);
    }
    return SBX_OK;
}

struct sbx_provider *core_provider_or_default(sbx_ctx *ctx, const char *provider)
{
    if (!provider)
        provider = sbx_ctx_default_provider(ctx);
    if (!provider) {
        core_error_set(SBX_E_PROVIDER_UNAVAILABLE, NULL,
                       "no provider is ready (see 'polysandbox providers')");
        return NULL;
    }
    return core_provider_get(ctx, provider);
}

int sbx_sandbox_open(sbx_ctx *ctx, const char *provider, const char *id, sbx_sandbox **out)
{
    struct sbx_provider *p;
    sbx_sandbox *sb;
    int rc;

    core_error_clear();
    if (!ctx || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_open: NULL argument");
    *out = NULL;
    if (check_id(id) != SBX_OK)
        return SBX_E_INVAL;
    if (!(p = core_provider_or_default(ctx, provider)))
        return core_error_tls()->code;
    if (!p->ops.attach)
        return core_error_set(SBX_E_NOTSUP, p->name,
                              "provider '%s' has no persistent sandboxes to open", p->name);
    if (!(sb = sandbox_alloc(ctx, p)))
        return SBX_E_NOMEM;
    if (resolve_limits(ctx, NULL, sb->limits) != SBX_OK) {
        sandbox_free(sb);
        return SBX_E_LIMIT;
    }
    core_unenforced_begin(sb->limits, true);
    /* Its network policy is not known here: one without a policy has the
     * network whatever it was asked, so its execs are refused unless
     * allowed. */
    core_unenforced_network(ctx, p, SBX_NET_NONE);
    rc = p->ops.attach(p->pctx, id, &sb->h);
    sb->unenforced = core_unenforced_end(&sb->unenforced_why);
    if (rc != SBX_OK) {
        if (rc == SBX_E_NOT_FOUND)
            core_id_hint_drop(ctx, p->name, id);   /* a stale hint, if any */
        sandbox_free(sb);
        return core_provider_failed(p, "attach", rc);
    }
    /* Not refused here, so that it can still be destroyed: its execs are. */
    sb->refused = (sb->unenforced & ~core_unenforced_ok(ctx, p)) != 0;
    snprintf(sb->id, sizeof sb->id, "%s", id);
    sb->kept = true;
    *out = sb;
    return SBX_OK;
}

const char *sbx_sandbox_id(const sbx_sandbox *sb) { return sb ? sb->id : NULL; }
const char *sbx_sandbox_provider(const sbx_sandbox *sb) { return sb ? sb->p->name : NULL; }

int core_destroy_by_id(struct sbx_provider *p, const char *id)
{
    void *h = NULL;
    const char *op = "attach";
    int rc;

    core_error_clear();
    rc = p->ops.attach(p->pctx, id, &h);
    if (rc == SBX_E_NOT_FOUND) {
        core_error_clear();
        rc = SBX_OK;
    } else if (rc == SBX_OK) {
        op = "destroy";
        rc = p->ops.destroy(p->pctx, h);
    }
    if (rc == SBX_OK)
        core_id_hint_drop(p->handle.ctx, p->name, id);
    return rc == SBX_OK ? rc : core_provider_failed(p, op, rc);
}

/* Destroy, retrying retryable failures so nothing leaks.  A failed destroy
 * has freed the handle already, so retries go through attach by id; an
 * attach that finds nothing means the first destroy did its work.  Each
 * retry is two calls (attach, destroy) that must both get through, so a
 * service failing often can outlast the retries: then the sandbox is kept
 * on the context to be destroyed later (core/run/orphans.c), never forgotten. */
static int destroy_retrying(sbx_sandbox *sb)
{
    struct sbx_provider *p = sb->p;
    core_retry rt;
    int rc;

    core_error_clear();
    rc = p->ops.destroy(p->pctx, sb->h);
    if (rc == SBX_OK) {
        core_orphans_retry_one(sb->ctx, p);
        return rc;
    }
    rc = core_provider_failed(p, "destroy", rc);
    if (!p->ops.attach)
        return rc;
    core_retry_begin(&rt, sb->ctx, p, 0);
    while (core_retry_again(&rt, rc)) {
        if ((rc = core_destroy_by_id(p, sb->id)) == SBX_OK)
            return rc;
    }
    core_orphan_keep(sb->ctx, p, sb->id);
    return rc;
}

int sbx_sandbox_destroy(sbx_sandbox *sb)
{
    int rc;

    core_error_clear();
    if (!sb)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_destroy: NULL sandbox");
    rc = destroy_retrying(sb);
    if (rc == SBX_OK && sb->kept)
        core_id_hint_drop(sb->ctx, sb->p->name, sb->id);
    sandbox_free(sb);
    return rc;
}

void sbx_sandbox_close(sbx_sandbox *sb)
{
    if (!sb)
        return;
    if (sb->p->ops.release)
        sb->p->ops.release(sb->p->pctx, sb->h);
    else
        sb->p->ops.destroy(sb->p->pctx, sb->h);  /* nothing persistent to keep */
    sandbox_free(sb);
}

/* ---- exec ----------------------------------------------------------------- */

/* Collects output for the result while relaying it to the caller, and
 * holds the output caps: this is the one place they are applied (a
 * provider need not count; one that floods is cut here all the same). */
struct collector {
    sbx_result *r;
    uint64_t cap_out, cap_err;
    sbx_output_cb cb;
    void *ud;
    bool nomem;
    bool capped;    /* a cap cut a stream: the run is an output limit */
    const sbx_cancel *cancel;
};

static int collect_write(void *ud, int stream, const void *buf, size_t len)
{
    struct collector *c = ud;
    core_buf *b = stream == SBX_STREAM_STDERR ? &c->r->err : &c->r->out;
    bool *trunc = stream == SBX_STREAM_STDERR ? &c->r->err_truncated : &c->r->out_truncated;
    uint64_t cap = stream == SBX_STREAM_STDERR ? c->cap_err : c->cap_out;
    size_t room = b->len >= cap ? 0 : (size_t)(cap - b->len);

    if (len > room) {
        len = room;
        *trunc = true;
        c->capped = true;
    }
    if (core_buf_append(b, buf, len) != SBX_OK) {
        c->nomem = true;
        return -1;
    }
    if (c->cb && len && c->cb(c->ud, stream, buf, len) != 0)
        return 1;
    /* A provider that does not poll cancel_fd still stops here. */
    if (sbx_cancel_fired(c->cancel))
        return 1;
    return *trunc ? 1 : 0;
}

/* The result of a run or exec its caller cancelled: not a verdict. */
void core_result_set_cancelled(sbx_result *r)
{
    core_result_set_sandbox_error(r, SBX_E_CANCELLED, "cancelled by the caller");
}

/* What an exec reports before the provider says anything: unknown. */
static void exec_out_reset(sbx_exec_outcome_v1 *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->exit_code = -1;
    out->cpu_ns = -1;
    out->peak_memory_bytes = -1;
}

/* ops->exec, and the retry hints of its failure into the thread's error,
 * where the retry reads them.  A provider of ABI 1.12 gives them in @out
 * and the zygote in @spec; one that declares an older minor gave the
 * hints through host->not_started and host->retry_after (already in the
 * error) and takes the zygote through ops->exec_zygote, whose SBX_E_NOTSUP
 * (nothing started) falls back to exec.  The one place of that older way. */
static int call_exec(struct sbx_provider *p, sbx_sandbox *sb, const sbx_exec_spec_v1 *spec,
                     const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct sbx_error *e;
    int rc;

    if (p->desc.abi_minor < 12) {
        if (spec->zygote && p->ops.exec_zygote && (p->desc.capabilities & SBX_CAP_ZYGOTE)) {
            rc = p->ops.exec_zygote(p->pctx, sb->h, spec->zygote, spec, sink, out);
            if (rc != SBX_E_NOTSUP)
                return rc;
            exec_out_reset(out);
            core_error_clear();
        }
        return p->ops.exec(p->pctx, sb->h, spec, sink, out);
    }
    rc = p->ops.exec(p->pctx, sb->h, spec, sink, out);
    e = core_error_tls();
    e->not_started = rc != SBX_OK && out->not_started;
    e->retry_after_ns = rc == SBX_OK ? 0
                        : out->retry_after_ms > UINT64_MAX / 1000000u
                            ? UINT64_MAX
                            : out->retry_after_ms * 1000000u;
    return rc;
}

static void exec_argv(sbx_sandbox *sb, const char *const *argv, const core_kvlist *env,
                      const sbx_exec_opts *o, const core_file *files, size_t n_files,
                      const sbx_file_v1 *extra, const char *const *zygote, sbx_result *r)
{
    struct sbx_provider *p = sb->p;
    sbx_exec_spec_v1 spec;
    sbx_exec_outcome_v1 out;
    sbx_file_v1 *fv = NULL;
    size_t nf = n_files + (extra ? 1 : 0);
    struct collector c = {r, sb->limits[SBX_LIMIT_STDOUT], sb->limits[SBX_LIMIT_STDERR],
                          o ? o->cb : NULL, o ? o->cb_ud : NULL, false, false,
                          o ? o->cancel : NULL};
    sbx_output_sink_v1 sink = {collect_write, &c};
    int rc;

    if (nf && !(fv = calloc(nf, sizeof *fv))) {
        core_result_set_sandbox_error(r, SBX_E_NOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < n_files; i++)
        fv[i] = (sbx_file_v1){files[i].path, files[i].data, files[i].len, files[i].mode};
    if (extra)
        fv[n_files] = *extra;

    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.argv = argv;
    spec.env = env->items;
    spec.n_env = env->n;
    spec.cwd = o ? o->cwd : NULL;
    spec.stdin_data = o ? o->stdin_data : NULL;
    spec.stdin_len = o ? o->stdin_len : 0;
    spec.files = fv;
    spec.n_files = nf;
    spec.timeout_ns = (o && o->timeout_ns) ? o->timeout_ns : sb->limits[SBX_LIMIT_WALL];
    spec.stdout_cap = sb->limits[SBX_LIMIT_STDOUT];
    spec.stderr_cap = sb->limits[SBX_LIMIT_STDERR];
    spec.cancel_fd = core_cancel_fd(c.cancel);
    spec.stdin_fd = o && o->has_stdin_fd ? o->stdin_fd : -1;
    spec.signal_fd = o && o->has_signal_fd ? o->signal_fd : -1;
    spec.zygote = zygote;

    if (sbx_cancel_fired(c.cancel)) {
        free(fv);
        core_result_set_cancelled(r);
        return;
    }
    exec_out_reset(&out);
    core_error_clear();
    rc = call_exec(p, sb, &spec, &sink, &out);
    /* A cancelled exec says so, whatever the provider made of it. */
    if (sbx_cancel_fired(c.cancel)) {
        free(fv);
        core_error_clear();
        core_result_set_cancelled(r);
        return;
    }
    /* Only an exec that never started its command may run again. */
    if (rc != SBX_OK && !c.nomem && core_error_tls()->not_started) {
        size_t out_len = r->out.len, err_len = r->err.len;
        bool out_cut = r->out_truncated, err_cut = r->err_truncated;
        core_retry rt;

        core_retry_begin(&rt, sb->ctx, p, 0);
        while (rc != SBX_OK && !c.nomem && core_error_tls()->not_started &&
               core_retry_again(&rt, core_provider_failed(p, "exec", rc))) {
            r->out.len = out_len;
            r->err.len = err_len;
            r->out_truncated = out_cut;
            r->err_truncated = err_cut;
            c.capped = false;
            exec_out_reset(&out);
            core_error_clear();
            rc = call_exec(p, sb, &spec, &sink, &out);
        }
    }
    free(fv);
    if (rc != SBX_OK || c.nomem) {
        if (c.nomem)
            core_error_set(SBX_E_NOMEM, NULL, "out of memory collecting output");
        else
            core_provider_failed(p, "exec", rc);
        r->retry_after_ns = core_error_tls()->retry_after_ns;
        core_result_set_sandbox_error(r, core_error_tls()->code, core_error_tls()->message);
        core_error_clear();
        return;
    }
    if (sb->unenforced) {
        r->unenforced = sb->unenforced;
        free(r->unenforced_why);
        r->unenforced_why = sb->unenforced_why ? strdup(sb->unenforced_why) : NULL;
    }
    /* Past a cap the sink asked the provider to stop: whatever it says
     * became of the command, the run is an output limit. */
    r->status = c.capped ? SBX_RUN_OUTPUT_LIMIT : out.status;
    r->exit_code = out.exit_code;
    r->signal = out.signal;
    r->out_truncated = r->out_truncated || out.stdout_truncated;
    r->err_truncated = r->err_truncated || out.stderr_truncated;
    r->cpu_ns = out.cpu_ns;
    r->peak_memory = out.peak_memory_bytes;
    r->timing[SBX_TIMING_START] += out.start_ns;
    r->timing[SBX_TIMING_EXEC] += out.exec_ns;
}

/* The argv a template runs: its run words followed by the caller's args. */
static char **template_argv(char *const *words, char *const *args)
{
    size_t nw = core_strv_len(words);
    size_t na = core_strv_len(args);
    char **v = calloc(nw + na + 1, sizeof *v);

    if (!v)
        return NULL;
    memcpy(v, words, nw * sizeof *v);
    if (na)
        memcpy(v + nw, args, na * sizeof *v);
    return v;   /* borrows the strings: free only the array */
}

static int exec_code(sbx_sandbox *sb, const sbx_exec_opts *o, sbx_result *r)
{
    const core_template_conf *t = core_find_template(sb->ctx, o->lang);
    core_kvlist env = {0};
    sbx_file_v1 src;
    char **argv, **compile = NULL, **run = NULL;
    const char *source = t ? t->source : NULL;
    int rc = SBX_OK;

    if (!t)
        return SBX_E_NOT_FOUND;
    if (o->source) {
        rc = core_source_rename(t->source, t->compile, t->run, o->source, &compile, &run);
        if (rc == SBX_E_NOMEM)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        if (rc == SBX_OK)
            source = o->source;
        rc = SBX_OK;
    }
    rc = core_template_env_add(sb->p, t, &env);
    for (size_t i = 0; rc == SBX_OK && i < o->env.n; i++)
        rc = core_kvlist_add(&env, o->env.items[i].key, o->env.items[i].value);
    if (rc != SBX_OK) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    src = (sbx_file_v1){source, o->code, o->code_len, 0644};
    if (t->compile) {
        /* The compiler gets no stdin; its output streams to the caller's
         * callback as a program's would, and is kept in the result only
         * when it fails. */
        sbx_exec_opts copts = {0};
        uint64_t start0 = r->timing[SBX_TIMING_START], exec0 = r->timing[SBX_TIMING_EXEC];
        copts.cwd = o->cwd;
        copts.timeout_ns = o->compile_timeout_ns ? o->compile_timeout_ns : o->timeout_ns;
        copts.cb = o->cb;
        copts.cb_ud = o->cb_ud;
        copts.cancel = o->cancel;
        exec_argv(sb, (const char *const *)(compile ? compile : t->compile), &env, &copts,
                  o->files, o->n_files,
                  &src, NULL, r);
        r->compiled = true;
        r->compile_status = r->status;
        /* The compile step is a phase of its own, not the program's. */
        r->compile_ns = r->timing[SBX_TIMING_START] - start0 + r->timing[SBX_TIMING_EXEC] - exec0;
        r->timing[SBX_TIMING_COMPILE] = r->compile_ns;
        r->timing[SBX_TIMING_START] = start0;
        r->timing[SBX_TIMING_EXEC] = exec0;
        if (core_buf_append(&r->compile_out, r->out.data, r->out.len) != SBX_OK ||
            core_buf_append(&r->compile_err, r->err.data, r->err.len) != SBX_OK) {
            core_kvlist_free(&env);
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        }
        if (r->status != SBX_RUN_OK) {
            if (r->status != SBX_RUN_SANDBOX_ERROR) {
                char msg[128];
                snprintf(msg, sizeof msg, "the compile step of template '%s' failed (%s)",
                         t->name, sbx_run_status_name(r->status));
                r->status = SBX_RUN_COMPILE_ERROR;
                free(r->error);
                r->error = strdup(msg);
            }
            goto out;
        }
        if (o->step_cb)
            o->step_cb(o->step_ud, r->compile_ns);
        /* The program's own output starts clean. */
        r->out.len = r->err.len = 0;
        r->out_truncated = r->err_truncated = false;
    }
    if (!(argv = template_argv(run ? run : t->run, o->args))) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    exec_argv(sb, (const char *const *)argv, &env, o, t->compile ? NULL : o->files,
              t->compile ? 0 : o->n_files, t->compile ? NULL : &src,
              (const char *const *)t->zygote, r);
    free(argv);
out:
    core_strv_free(compile);
    core_strv_free(run);
    core_kvlist_free(&env);
    return rc;
}

int core_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *o, sbx_result *r)
{
    uint64_t max_wall = sb->ctx->cfg.max_limits[SBX_LIMIT_WALL];
    int rc;

    if (!o || (!o->argv && !o->code))
        return core_error_set(SBX_E_INVAL, NULL, "nothing to run: give a command or code");
    if (sb->refused)
        return core_unenforced_refuse(sb->p, sb->unenforced &
                                      ~core_unenforced_ok(sb->ctx, sb->p), sb->limits,
                                      sb->unenforced_why);
    /* Input that cannot be delivered is refused, never dropped. */
    if (o->has_stdin_fd && !(sb->p->desc.capabilities & SBX_CAP_STDIN_STREAM))
        return core_error_set(SBX_E_NOTSUP, sb->p->name, "provider %s cannot stream stdin to a "
                              "running command (no stdin_stream capability)", sb->p->name);
    if (o->has_signal_fd && !(sb->p->desc.capabilities & SBX_CAP_SIGNAL))
        return core_error_set(SBX_E_NOTSUP, sb->p->name, "provider %s cannot deliver a signal "
                              "to a running command (no signal capability)", sb->p->name);
    if (o->timeout_ns && max_wall && o->timeout_ns > max_wall)
        return core_error_set(SBX_E_LIMIT, NULL,
                              "timeout %llu ns is above the maximum %llu ns (limits.max_wall)",
                              (unsigned long long)o->timeout_ns, (unsigned long long)max_wall);
    if (o->compile_timeout_ns && max_wall && o->compile_timeout_ns > max_wall)
        return core_error_set(SBX_E_LIMIT, NULL, "compile timeout %llu ns is above the maximum "
                              "%llu ns (limits.max_wall)",
                              (unsigned long long)o->compile_timeout_ns,
                              (unsigned long long)max_wall);
    const core_template_conf *ct = o->code ? core_find_template(sb->ctx, o->lang) : NULL;
    if (ct && ct->artifacts && !(sb->p->desc.capabilities & SBX_CAP_FILES))
        return core_error_set(SBX_E_NOTSUP, sb->p->name, "template '%s' declares artifacts "
                              "but provider %s cannot read files back (no files capability)",
                              ct->name, sb->p->name);
    pthread_mutex_lock(&sb->lock);
    if (o->code) {
        rc = exec_code(sb, o, r);
    } else {
        exec_argv(sb, (const char *const *)o->argv, &o->env, o, o->files, o->n_files, NULL,
                  sb->tmpl ? (const char *const *)sb->tmpl->zygote : NULL, r);
        rc = SBX_OK;
    }
    pthread_mutex_unlock(&sb->lock);
    /* Only code runs: the listing is itself an argv run on @sb. */
    if (rc == SBX_OK && ct && ct->artifacts && r->status != SBX_RUN_SANDBOX_ERROR &&
        r->status != SBX_RUN_COMPILE_ERROR)
        rc = core_artifacts_collect(sb, ct, r);
    return rc;
}

int sbx_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *opts, sbx_result **out)
{
    sbx_result *r;
    uint64_t t0 = core_now_ns();
    int rc;

    core_error_clear();
    if (!sb || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_exec: NULL argument");
    *out = NULL;
    if (!(r = core_result_new(sb->p->name, sb->id)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    rc = core_sandbox_exec(sb, opts, r);
    if (rc != SBX_OK) {
        sbx_result_free(r);
        return rc;
    }
    r->timing[SBX_TIMING_TOTAL] = core_now_ns() - t0;
    *out = r;
    return SBX_OK;
}

/* ---- files ---------------------------------------------------------------- */

int sbx_sandbox_upload(sbx_sandbox *sb, const char *path, const void *data, size_t len,
                       uint32_t mode)
{
    int rc;

    core_error_clear();
    if (!sb || !path || (!data && len))
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_upload: NULL argument");
    if (!sb->p->ops.upload)
        return core_error_set(SBX_E_NOTSUP, sb->p->name, "provider '%s' cannot upload files",
                              sb->p->name);
    pthread_mutex_lock(&sb->lock);
    rc = sb->p->ops.upload(sb->p->pctx, sb->h, path, data ? data : "", len, mode & 07777);
    pthread_mutex_unlock(&sb->lock);
    return rc == SBX_OK ? rc : core_provider_failed(sb->p, "upload", rc);
}

int sbx_sandbox_download(sbx_sandbox *sb, const char *path, size_t max, void **data,
                         size_t *len)
{
    int rc;

    core_error_clear();
    if (!sb || !path || !data || !len)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_download: NULL argument");
    *data = NULL;
    *len = 0;
    if (!sb->p->ops.download)
        return core_error_set(SBX_E_NOTSUP, sb->p->name,
                              "provider '%s' cannot download files", sb->p->name);
    pthread_mutex_lock(&sb->lock);
    rc = sb->p->ops.download(sb->p->pctx, sb->h, path, max, data, len);
    pthread_mutex_unlock(&sb->lock);
    return rc == SBX_OK ? rc : core_provider_failed(sb->p, "download", rc);
}
