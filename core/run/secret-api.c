/* core/run/secret-api.c - sbx_secret_*: key pair, sealing, checking */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "context.h"
#include "secrets/secrets.h"
#include "settings-read.h"
#include "loader/loader.h"
#include "provider-int.h"

int sbx_secret_keygen(const char *config_dir, bool force, char *key_id)
{
    char hex[CORE_KEY_ID_HEX];
    const char *dir;
    int rc;

    core_error_clear();
    core_hostkey_dir(config_dir, &dir);
    rc = core_hostkey_create(dir, force, hex);
    if (rc == SBX_OK && key_id)
        memcpy(key_id, hex, CORE_KEY_ID_HEX);
    return rc;
}

int sbx_secret_seal(const char *config_dir, const void *value, size_t len,
                    char **sealed)
{
    unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES];
    const char *dir;
    int rc;

    core_error_clear();
    if (!sealed || (!value && len))
        return core_error_set(SBX_E_INVAL, NULL, "sbx_secret_seal: NULL argument");
    *sealed = NULL;
    if (len == 0 || len > CORE_SEALED_MAX)
        return core_error_set(SBX_E_INVAL, NULL, "a value to seal must have 1 to %d "
                              "bytes (this one has %zu)", CORE_SEALED_MAX, len);
    core_hostkey_dir(config_dir, &dir);
    rc = core_hostkey_load_public(dir, pk, id);
    if (rc != SBX_OK)
        return rc;
    return core_sealed_encode(pk, id, value, len, sealed);
}

static bool key_listed(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

static const char *source_of(const char *v)
{
    if (!strncmp(v, "sealed:", 7))
        return "sealed";
    if (!strncmp(v, "env:", 4))
        return "env";
    if (!strncmp(v, "file:", 5))
        return "file";
    return "plain";
}

/* The loader's refusal of this very setting, if the provider has one
 * (its reason then starts with the setting's FILE:LINE:). */
static const char *refusal(const struct sbx_provider *p, const core_setting *s)
{
    char where[CORE_MSG_MAX];
    int n;

    if (!p || p->state != SBX_PROVIDER_UNAVAILABLE || !p->reason || s->line <= 0)
        return NULL;
    n = snprintf(where, sizeof where, "%s:%d: ", s->file, s->line);
    if (n < 0 || (size_t)n >= sizeof where)
        return NULL;
    return strncmp(p->reason, where, (size_t)n) == 0 ? p->reason : NULL;
}

/* Open @s (of @owner, as @key) and wipe it again, telling @cb; @why: the
 * loader's refusal of it, if any.  Returns whether it failed. */
static bool check_one(sbx_ctx *ctx, sbx_secret_check_cb cb, void *ud, const char *owner,
                      const char *key, const core_setting *s, const char *why)
{
    const char *source = source_of(s->value);
    const char *value = NULL;
    char msg[CORE_MSG_MAX];
    size_t len = 0;
    int rc;

    if (why) {
        cb(ud, owner, key, s->file, s->line, source, SBX_E_CONFIG, why);
        return true;
    }
    if (!strcmp(source, "plain")) {
        cb(ud, owner, key, s->file, s->line, source, SBX_OK,
           "stored in clear text (seal it with 'polysandbox secret seal')");
        return false;
    }
    rc = core_secret_open(ctx, s, &value, &len);
    if (rc == SBX_OK) {
        core_secret_release(value);
        cb(ud, owner, key, s->file, s->line, source, SBX_OK, NULL);
        return false;
    }
    snprintf(msg, sizeof msg, "%s", core_error_tls()->message);
    core_error_clear();
    cb(ud, owner, key, s->file, s->line, source, rc, msg);
    return true;
}

int sbx_secret_check(sbx_ctx *ctx, sbx_secret_check_cb cb, void *ud)
{
    size_t total = 0, failed = 0;

    core_error_clear();
    if (!ctx || !cb)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_secret_check: NULL argument");
    for (size_t i = 0; i < ctx->cfg.n_providers; i++) {
        const core_provider_conf *c = &ctx->cfg.providers[i];
        const struct sbx_provider *p = sbx_ctx_find_provider(ctx, c->name);
        const char *const *secret_keys;

        /* Its descriptor names the credentials; the loader's verdict may
         * refuse a setting. */
        core_provider_ensure(p);
        secret_keys = p && p->desc.magic == SBX_PROVIDER_MAGIC ? p->desc.secret_keys : NULL;

        for (size_t k = 0; k < c->n_settings; k++) {
            const core_setting *s = &c->settings[k];

            /* Without the provider's descriptor only a sealed value is
             * known to be a credential. */
            if (!key_listed(secret_keys, s->key) && strcmp(source_of(s->value), "sealed") != 0)
                continue;
            total++;
            failed += check_one(ctx, cb, ud, c->name, s->key, s, refusal(p, s));
        }
    }
    /* The image registries' passwords: [registry HOST] password, kept as
     * "HOST.password". */
    for (size_t i = 0; i < ctx->cfg.n_registries; i++) {
        const core_setting *s = &ctx->cfg.registries[i];
        size_t kl = strlen(s->key);
        char owner[300];

        if (kl <= 9 || strcmp(s->key + kl - 9, ".password") != 0)
            continue;
        snprintf(owner, sizeof owner, "registry %.*s", (int)(kl - 9), s->key);
        total++;
        failed += check_one(ctx, cb, ud, owner, "password", s, NULL);
    }
    core_error_clear();
    if (failed)
        return core_error_set(SBX_E_CONFIG, NULL, "%zu of %zu credentials cannot be opened",
                              failed, total);
    return SBX_OK;
}

int core_secret_ctx_protect(const core_config *cfg)
{
    /* Only root, up front: an undumpable process owns its children's
     * /proc files as root, so an unprivileged one could no longer write a
     * new user namespace's uid_map (the local provider).  Any process is
     * made undumpable anyway by the first core_secret_open, before a
     * secret is in its memory. */
    if (geteuid() != 0)
        return SBX_OK;
    for (size_t i = 0; i < cfg->n_providers; i++) {
        const core_provider_conf *c = &cfg->providers[i];
        if (!c->enabled)
            continue;
        for (size_t k = 0; k < c->n_settings; k++)
            if (!strncmp(c->settings[k].value, "sealed:", 7))
                return core_secret_protect_process();
    }
    return SBX_OK;
}

int sbx_secret_open(const sbx_ctx *ctx, const char *ref, const char *where, char **value,
                    size_t *len)
{
    core_setting s = { NULL, (char *)ref, (char *)(where ? where : "a credential"), 0 };
    const char *v = NULL;
    int rc;

    core_error_clear();
    if (!ref || !value || !len)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_secret_open: NULL argument");
    *value = NULL;
    *len = 0;
    rc = core_secret_open(ctx, &s, &v, len);
    if (rc == SBX_OK)
        *value = (char *)v;
    return rc;
}

void sbx_secret_free(char *value)
{
    if (value)
        core_secret_release(value);
}
