/* core/run/id-hint.c - which provider this user made a sandbox id on
 *
 * Ids carry no provider name, so opening one by id alone meant listing
 * every provider's sandboxes: a round trip per cloud on every exec.  A
 * persistent create leaves an empty file STATE_DIR/sandbox-ids/PROVIDER/ID
 * (a name no provider can have: '-' is outside [a-z0-9_]); destroying the
 * sandbox, or an open that finds nothing there, removes it.  A hint is
 * only where to look first: the caller opens the sandbox on that provider,
 * which verifies it, and lists as before when there is none or several.
 * Writing one is best effort: a failure costs that listing later, never
 * the create, and leaves the caller's error as it was.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "owner.h"
#include "provider-int.h"
#include "run/id-hint.h"
#include "context.h"

#define HINT_DIR "sandbox-ids"

/* STATE_DIR/sandbox-ids/PROVIDER[/ID], or NULL (out of memory, no state
 * directory, or an id that cannot name a file: ".", ".." and the like). */
static char *hint_path(const struct sbx_ctx *ctx, const char *provider, const char *id)
{
    char *path = NULL;
    int n;

    if (!ctx->cfg.state_dir || (id && (id[0] == '.' || id[0] == '\0' || strchr(id, '/'))))
        return NULL;
    if (id)
        n = asprintf(&path, "%s/" HINT_DIR "/%s/%s", ctx->cfg.state_dir, provider, id);
    else
        n = asprintf(&path, "%s/" HINT_DIR "/%s", ctx->cfg.state_dir, provider);
    return n < 0 ? NULL : path;
}

void core_id_hint_put(const struct sbx_ctx *ctx, const char *provider, const char *id)
{
    struct sbx_error saved = *core_error_tls();
    char *top = NULL, *dir = hint_path(ctx, provider, NULL), *path = hint_path(ctx, provider, id);
    int fd;

    if (!dir || !path || asprintf(&top, "%s/" HINT_DIR, ctx->cfg.state_dir) < 0) {
        top = NULL;
        goto out;
    }
    /* Ours and private, like the state directory: a hint another user
     * could plant would send our exec to their choice of provider. */
    if (core_private_dir(ctx->cfg.state_dir, "state directory") != SBX_OK ||
        core_private_dir(top, "sandbox id directory") != SBX_OK ||
        core_private_dir(dir, "sandbox id directory") != SBX_OK)
        goto out;
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd >= 0)
        (void)close(fd);
out:
    *core_error_tls() = saved;
    free(top);
    free(dir);
    free(path);
}

void core_id_hint_drop(const struct sbx_ctx *ctx, const char *provider, const char *id)
{
    char *path = hint_path(ctx, provider, id);

    /* Gone already, or never written: nothing to do either way. */
    if (path)
        (void)unlink(path);
    free(path);
}

/* A hint counts only as a plain file of ours: a link, a directory or
 * another user's file is not one. */
static bool hint_is(const struct sbx_ctx *ctx, const char *provider, const char *id)
{
    char *path = hint_path(ctx, provider, id);
    struct stat st;
    bool yes;

    if (!path)
        return false;
    yes = lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
    free(path);
    return yes;
}

const char *sbx_sandbox_hint(sbx_ctx *ctx, const char *id)
{
    const struct sbx_provider *one = NULL;

    if (!ctx || !id || strlen(id) >= SBX_ID_MAX)
        return NULL;
    /* Files first, by the names discovery knows: loading a provider (a
     * cloud's init) is what this saves, so only one with a hint loads. */
    for (size_t i = 0; i < ctx->n_providers; i++) {
        if (!hint_is(ctx, ctx->providers[i].name, id))
            continue;
        if (one)
            return NULL;    /* several: only a listing can tell */
        one = &ctx->providers[i];
    }
    if (!one || sbx_provider_get_state(one) != SBX_PROVIDER_READY ||
        !(sbx_provider_capabilities(one) & SBX_CAP_PERSISTENT) ||
        sbx_ctx_find_provider(ctx, one->name) != one)
        return NULL;
    return one->name;
}
