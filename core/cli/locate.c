/* core/cli/locate.c - opening a sandbox by id, finding its provider
 *
 * Ids are made by each provider and carry no provider name.  Exec, files,
 * destroy, upload and download without --provider first open the id on
 * the one provider the state directory records it was created on
 * (sbx_sandbox_hint: a stat, no call to any provider), which verifies the
 * hint.  Without one, with several, or when that open fails, they ask
 * every ready provider that can list sandboxes whether it has the id: one
 * that several have is refused as ambiguous; one that none lists goes to
 * the default provider as before, and failing there the error names the
 * providers whose listing failed, since the sandbox may be on one.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct seek {
    const char *id;
    bool found;
} seek;

static int on_sandbox(void *ud, const char *id, const char *const *labels,
                      size_t n_labels, uint64_t created_unix_ns)
{
    seek *s = ud;

    (void)labels;
    (void)n_labels;
    (void)created_unix_ns;
    if (strcmp(id, s->id) != 0)
        return 0;
    s->found = true;
    return 1; /* found: stop the walk */
}

/* Append ", NAME" (or "NAME") to @buf, truncating quietly. */
static void add_name(char *buf, size_t size, const char *name)
{
    size_t used = strlen(buf);

    if (used < size)
        snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
}

/* What the search found. */
typedef struct found {
    const char *provider;   /* the one that has the id, or NULL */
    bool ambiguous;         /* several have it */
    size_t tried;           /* providers asked */
    char where[512];        /* those that have it */
    char failed[512];       /* those whose listing failed */
} found;

static void find_provider(sbx_ctx *ctx, const char *id, found *f)
{
    size_t n = sbx_ctx_provider_count(ctx);

    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n && !f->ambiguous; i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        const char *name = sbx_provider_name(p);
        seek s = { id, false };
        int rc;

        if (sbx_provider_get_state(p) != SBX_PROVIDER_READY ||
            !(sbx_provider_capabilities(p) & SBX_CAP_PERSISTENT))
            continue;
        f->tried++;
        rc = sbx_list(ctx, name, on_sandbox, &s);
        if (!s.found) {
            if (rc != SBX_OK)
                add_name(f->failed, sizeof f->failed, name);
            continue;
        }
        add_name(f->where, sizeof f->where, name);
        f->ambiguous = f->provider != NULL;
        f->provider = name;
    }
}

int cli_sandbox_open(sbx_ctx *ctx, const char *cmd, const char *provider,
                     const char *id, sbx_sandbox **out)
{
    char what[SBX_ID_MAX + 160];
    found f;
    int rc;

    *out = NULL;
    if (provider == NULL) {
        const char *hint = sbx_sandbox_hint(ctx, id);

        if (hint && sbx_sandbox_open(ctx, hint, id, out) == SBX_OK)
            return -1;
        find_provider(ctx, id, &f);
        if (f.ambiguous) {
            cli_err("%s: sandbox '%s' is on several providers (%s): say "
                    "which with --provider", cmd, id, f.where);
            return CLI_EXIT_USAGE;
        }
        provider = f.provider;
        /* No listing showed it (one failed, or lists only some): the
         * default provider, as before ids found their provider, may
         * still open it, and else says best why not. */
        if (provider == NULL && f.failed[0] == '\0' &&
            sbx_ctx_default_provider(ctx) != NULL) {
            if ((rc = sbx_sandbox_open(ctx, NULL, id, out)) == SBX_OK)
                return -1;
            snprintf(what, sizeof what, "%s: sandbox '%s' not found on any "
                     "enabled provider; %s says", cmd, id,
                     sbx_ctx_default_provider(ctx));
            return cli_lib_error(ctx, rc, what);
        }
        if (provider == NULL && f.failed[0] != '\0' &&
            sbx_ctx_default_provider(ctx) != NULL &&
            sbx_sandbox_open(ctx, NULL, id, out) == SBX_OK)
            return -1;
        if (provider == NULL && f.failed[0] != '\0') {
            cli_err("%s: sandbox '%s' not found; the sandboxes of %s could "
                    "not be listed: give --provider", cmd, id, f.failed);
            return CLI_EXIT_ERROR;
        }
        if (provider == NULL) {
            cli_err("%s: sandbox '%s' not found on any enabled provider%s",
                    cmd, id, f.tried ? "" : " (none keeps sandboxes: see "
                    "'polysandbox providers')");
            return CLI_EXIT_USAGE;
        }
    }
    rc = sbx_sandbox_open(ctx, provider, id, out);
    if (rc == SBX_OK)
        return -1;
    snprintf(what, sizeof what, "%s: sandbox '%s'", cmd, id);
    return cli_lib_error(ctx, rc, what);
}

sbx_sandbox *cli_sandbox_open_by_id(const cli_global *g, sbx_ctx **ctx, const char *cmd,
                                    const char *provider, const char *id, int *exit)
{
    sbx_sandbox *sb = NULL;
    int rc;

    *exit = CLI_EXIT_ERROR;
    if ((*ctx = cli_ctx_new(g)) == NULL || !cli_provider_ok(*ctx, provider))
        return NULL;
    if ((rc = cli_sandbox_open(*ctx, cmd, provider, id, &sb)) >= 0) {
        *exit = rc;
        return NULL;
    }
    return sb;
}
