/* tests/unit/confdir.h - throwaway configuration directories for the
 * tests that open contexts on test modules (tests/loader, tests/lazy)
 *
 * confdir_begin() makes one temporary root per run; new_confdir() a
 * configuration directory in it per test; confdir_end() removes it all.
 * Any failure to set up bails out of the TAP run.
 */
#ifndef POLYSANDBOX_TESTS_CONFDIR_H
#define POLYSANDBOX_TESTS_CONFDIR_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "tap.h"

static char tmproot[256];   /* every config dir of this run lives here */

__attribute__((noreturn, unused))
static void bail(const char *what)
{
    printf("Bail out! %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Write @text to @dir/@rel. */
__attribute__((unused))
static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, rel);
    f = fopen(path, "w");
    if (!f)
        bail(path);
    if (fputs(text, f) == EOF || fclose(f) != 0)
        bail(path);
}

/* A fresh config dir <tmproot>/<tag> holding polysandbox.ini (@core) and
 * a providers.d/ where `local`, which the core enables even without a
 * file, is disabled. */
__attribute__((unused))
static const char *new_confdir(const char *tag, const char *core, char *buf, size_t len)
{
    char sub[4096];

    snprintf(buf, len, "%s/%s", tmproot, tag);
    if (mkdir(buf, 0700) != 0)
        bail(buf);
    snprintf(sub, sizeof sub, "%s/providers.d", buf);
    if (mkdir(sub, 0700) != 0)
        bail(sub);
    write_file(buf, "polysandbox.ini", core);
    write_file(buf, "providers.d/local.ini", "[provider]\nenabled = false\n");
    return buf;
}

/* sbx_ctx_new on @dir, or NULL with the reason as a TAP diagnostic. */
__attribute__((unused))
static sbx_ctx *open_ctx(const char *dir)
{
    sbx_ctx *ctx = NULL;
    int rc = sbx_ctx_new(&ctx, dir);

    if (rc != SBX_OK) {
        diag("sbx_ctx_new(%s): %s: %s", dir, sbx_strerror(rc),
             ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "(no context)");
        sbx_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Make tmproot as $TMPDIR/@prefix-XXXXXX. */
__attribute__((unused))
static void confdir_begin(const char *prefix)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(tmproot, sizeof tmproot, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp(tmproot))
        bail("mkdtemp");
}

__attribute__((unused))
static int confdir_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(path);
}

__attribute__((unused))
static void confdir_end(void)
{
    if (nftw(tmproot, confdir_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        diag("could not remove %s: %s", tmproot, strerror(errno));
}

#endif /* POLYSANDBOX_TESTS_CONFDIR_H */
