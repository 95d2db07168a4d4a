/* core/run/context.c - the context: configuration, providers, templates */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/image.h>

#include "error.h"
#include "conf.h"
#include "config/config-load.h"
#include "run/template-int.h"
#include "run/sandbox-int.h"
#include "context.h"
#include "loader/loader.h"
#include "provider-int.h"

const char *sbx_version(void)
{
    return PACKAGE_VERSION;
}

/* An optional provider that fails to load is not listed, so whether it
 * is listed is known only once it was loaded. */
static bool listed(const struct sbx_provider *p)
{
    if (p->conf && p->conf->optional)
        core_provider_ensure(p);
    return !p->hidden;
}

/* Listing loads the optional providers (only they can vanish); the others
 * load when their state is asked for. */
size_t sbx_ctx_provider_count(const sbx_ctx *ctx)
{
    size_t n = 0;

    for (size_t i = 0; ctx && i < ctx->n_providers; i++)
        n += listed(&ctx->providers[i]);
    return n;
}

const sbx_provider *sbx_ctx_provider(const sbx_ctx *ctx, size_t i)
{
    for (size_t k = 0; ctx && k < ctx->n_providers; k++)
        if (listed(&ctx->providers[k]) && i-- == 0)
            return &ctx->providers[k];
    return NULL;
}

const sbx_provider *sbx_ctx_find_provider(const sbx_ctx *ctx, const char *name)
{
    if (!ctx || !name)
        return NULL;
    for (size_t i = 0; i < ctx->n_providers; i++)
        if (!strcmp(ctx->providers[i].name, name))
            return listed(&ctx->providers[i]) ? &ctx->providers[i] : NULL;
    return NULL;
}

/* The one way the core asks for a provider to use: loads it on demand. */
struct sbx_provider *core_provider_get(const sbx_ctx *ctx, const char *name)
{
    struct sbx_provider *p = (struct sbx_provider *)sbx_ctx_find_provider(ctx, name);

    core_provider_ensure(p);
    if (!p) {
        core_error_set(SBX_E_NOT_FOUND, NULL,
                       "no provider named '%s' (see 'polysandbox providers')", name);
        return NULL;
    }
    if (p->state == SBX_PROVIDER_DISABLED) {
        core_error_set(SBX_E_PROVIDER_UNAVAILABLE, name,
                       "provider '%s' is not enabled (set enabled = true in providers.d/%s.ini)",
                       name, name);
        return NULL;
    }
    if (p->state != SBX_PROVIDER_READY) {
        core_error_set(SBX_E_PROVIDER_UNAVAILABLE, name, "provider '%s' is unavailable: %s",
                       name, p->reason ? p->reason : "unknown reason");
        return NULL;
    }
    return p;
}

const char *sbx_ctx_default_provider(const sbx_ctx *ctx)
{
    if (!ctx)
        return NULL;
    if (ctx->cfg.default_provider)
        return ctx->cfg.default_provider;
    /* The first that loads: later ones stay unloaded. */
    for (size_t i = 0; i < ctx->n_providers; i++) {
        const struct sbx_provider *p = &ctx->providers[i];
        core_provider_ensure(p);
        if (p->state == SBX_PROVIDER_READY)
            return p->name;
    }
    return NULL;
}

const char *sbx_provider_name(const sbx_provider *p) { return p ? p->name : NULL; }
const char *sbx_provider_path(const sbx_provider *p) { return p ? p->path : NULL; }
const char *sbx_provider_config_file(const sbx_provider *p)
{
    return p && p->conf ? p->conf->file : NULL;
}
int sbx_provider_priority(const sbx_provider *p) { return p ? p->priority : 0; }

const char *const *sbx_ctx_config_dirs(const sbx_ctx *ctx)
{
    return ctx ? (const char *const *)ctx->cfg.dirs : NULL;
}

const char *const *sbx_provider_credential_keys(const sbx_provider *p)
{
    return core_provider_credential_keys(p);
}

/* What only loading tells: each of these loads @p first when needed. */
sbx_provider_state sbx_provider_get_state(const sbx_provider *p)
{
    core_provider_ensure(p);
    return p ? p->state : SBX_PROVIDER_UNAVAILABLE;
}

const char *sbx_provider_reason(const sbx_provider *p)
{
    core_provider_ensure(p);
    return p ? p->reason : NULL;
}

int sbx_provider_reason_code(const sbx_provider *p)
{
    core_provider_ensure(p);
    return p ? p->reason_code : 0;
}

/* Descriptor strings are only trusted once the descriptor was copied. */
const char *sbx_provider_version(const sbx_provider *p)
{
    core_provider_ensure(p);
    return (p && p->desc.magic == SBX_PROVIDER_MAGIC) ? p->desc.version : NULL;
}

const char *sbx_provider_description(const sbx_provider *p)
{
    core_provider_ensure(p);
    return (p && p->desc.magic == SBX_PROVIDER_MAGIC) ? p->desc.description : NULL;
}

uint64_t sbx_provider_capabilities(const sbx_provider *p)
{
    core_provider_ensure(p);
    return (p && p->desc.magic == SBX_PROVIDER_MAGIC) ? p->desc.capabilities : 0;
}

struct doctor_relay {
    sbx_doctor_cb cb;
    void *ud;
};

static void doctor_relay_cb(void *ud, const char *check, int ok, const char *detail)
{
    struct doctor_relay *r = ud;
    r->cb(r->ud, check, ok != 0, detail);
}

int sbx_provider_doctor(sbx_ctx *ctx, const char *provider, sbx_doctor_cb cb, void *ud)
{
    struct sbx_provider *p;
    struct doctor_relay relay = {cb, ud};

    core_error_clear();
    if (!ctx || !cb)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_provider_doctor: NULL argument");
    if (!provider)
        provider = sbx_ctx_default_provider(ctx);
    if (!provider)
        return core_error_set(SBX_E_NOT_FOUND, NULL, "no provider is ready");
    p = core_provider_get(ctx, provider);
    if (!p)
        return core_error_tls()->code;
    if (!p->ops.doctor)
        return core_error_set(SBX_E_NOTSUP, p->name, "provider '%s' has no host checks",
                              p->name);
    p->ops.doctor(p->pctx, doctor_relay_cb, &relay);
    return SBX_OK;
}

/* ---- templates: sbx_template is a view of core_template_conf ---------- */

static const core_template_conf *tconf(const sbx_template *t)
{
    return (const core_template_conf *)(const void *)t;
}

size_t sbx_ctx_template_count(const sbx_ctx *ctx)
{
    return ctx ? ctx->cfg.n_templates : 0;
}

const sbx_template *sbx_ctx_template(const sbx_ctx *ctx, size_t i)
{
    if (!ctx || i >= ctx->cfg.n_templates)
        return NULL;
    return (const sbx_template *)(const void *)&ctx->cfg.templates[i];
}

const sbx_template *sbx_ctx_find_template(const sbx_ctx *ctx, const char *name)
{
    if (!ctx || !name)
        return NULL;
    for (size_t i = 0; i < ctx->cfg.n_templates; i++)
        if (!strcmp(ctx->cfg.templates[i].name, name))
            return sbx_ctx_template(ctx, i);
    return NULL;
}

const sbx_template *sbx_ctx_template_for_file(const sbx_ctx *ctx, const char *filename)
{
    const char *dot;

    if (!ctx || !filename)
        return NULL;
    dot = strrchr(filename, '.');
    if (!dot || strchr(dot, '/'))
        return NULL;
    for (size_t i = 0; i < ctx->cfg.n_templates; i++) {
        char *const *e = ctx->cfg.templates[i].extensions;
        for (; e && *e; e++)
            if (!strcmp(*e, dot))
                return sbx_ctx_template(ctx, i);
    }
    return NULL;
}

const char *sbx_template_name(const sbx_template *t)
{
    return t ? tconf(t)->name : NULL;
}

bool sbx_template_compiled(const sbx_template *t)
{
    return t && tconf(t)->compile;
}

const char *sbx_template_artifacts(const sbx_template *t)
{
    return t ? tconf(t)->artifacts : NULL;
}

bool sbx_template_egress(const sbx_template *t)
{
    return t && tconf(t)->egress;
}

const char *sbx_template_extensions(const sbx_template *t)
{
    /* Joined lazily would need storage; templates keep few extensions, so
     * a per-thread buffer is enough for this informational call. */
    static _Thread_local char buf[256];
    size_t off = 0;

    if (!t)
        return NULL;
    buf[0] = '\0';
    for (char *const *e = tconf(t)->extensions; e && *e; e++) {
        size_t n = strlen(*e);
        if (off + n + 2 > sizeof buf)
            break;
        if (off)
            buf[off++] = ' ';
        memcpy(buf + off, *e, n + 1);
        off += n;
    }
    return buf;
}

const char *sbx_template_source(const sbx_template *t)
{
    return t ? tconf(t)->source : NULL;
}

const char *const *sbx_template_run(const sbx_template *t)
{
    return t ? (const char *const *)tconf(t)->run : NULL;
}

size_t sbx_template_env_count(const sbx_template *t)
{
    return t ? tconf(t)->n_env : 0;
}

bool sbx_template_env(const sbx_template *t, size_t i, const char **key, const char **value)
{
    if (!t || i >= tconf(t)->n_env)
        return false;
    *key = tconf(t)->env[i].key;
    *value = tconf(t)->env[i].value;
    return true;
}

bool sbx_template_cache_stale(const sbx_template *t, char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    return t && core_template_cache_stale(tconf(t), why, why_size);
}

bool sbx_template_usable(const sbx_ctx *ctx, const sbx_template *t, const char *provider,
                         char *why, size_t why_size)
{
    char dummy[1];
    const struct sbx_provider *p;
    const core_template_conf *tc = tconf(t);

    if (!why || !why_size) {
        why = dummy;
        why_size = sizeof dummy;
    }
    why[0] = '\0';
    if (!ctx || !t || !provider) {
        snprintf(why, why_size, "no template or provider given");
        return false;
    }
    if (!(p = core_provider_get(ctx, provider))) {
        snprintf(why, why_size, "%s", core_error_tls()->message);
        core_error_clear();
        return false;
    }
    bool host_root = p->desc.flags & SBX_PROVIDER_F_HOST_ROOT;
    bool named;
    const char *image = core_template_image(tc, p->name, host_root, &named);
    if (host_root && image && image[0] != '/') {
        /* Its runtime is the image's: usable once pulled. */
        char *root = NULL;
        int rc = sbx_image_root(ctx, image, &root);
        if (rc == SBX_OK)
            snprintf(why, why_size, "runs image %s (pulled)", image);
        else
            snprintf(why, why_size, "%s", core_error_tls()->message);
        core_error_clear();
        free(root);
        return rc == SBX_OK;
    }
    if (host_root && image) {
        snprintf(why, why_size, "runs in the directory %s", image);
        return true;
    }
    if (host_root) {
        if (tc->missing) {
            if (tc->missing_required)
                snprintf(why, why_size, "%s is not on the host (requires)", tc->missing);
            else
                snprintf(why, why_size, "%s is not on the host (looked in "
                         CORE_TEMPLATE_PATH ")", tc->missing);
            return false;
        }
        snprintf(why, why_size, "runs the host's %s", tc->compile ? tc->compile[0] : tc->run[0]);
        return true;
    }
    /* An image is the provider's to find or pull when a sandbox starts;
     * a plain one is a default, which a provider that runs no such
     * image ignores (an image.PROVIDER it refuses). */
    if (image && named)
        snprintf(why, why_size, "runs image %s (not checked before a run)", image);
    else if (image)
        snprintf(why, why_size, "runs image %s if the provider runs images, else its own "
                 "(not checked before a run)", image);
    else
        snprintf(why, why_size, "runs the provider's default image (not checked before a run)");
    return true;
}
