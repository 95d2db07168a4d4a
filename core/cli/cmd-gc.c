/* core/cli/cmd-gc.c - polysandbox gc: reap sandboxes whose time-to-live
 * passed (left behind by a process that crashed) */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"

static void gc_help(void)
{
    fputs(
"Usage: polysandbox gc [--provider NAME] [--dry-run] [--any-owner] [--json]\n"
"Destroy sandboxes left behind by a process that crashed: those with this\n"
"user and host's owner label (polysandbox.owner = UID@HOST) whose\n"
"time-to-live has passed (polysandbox.expires).  Sandboxes created without\n"
"a time-to-live are never reaped.  Without --provider, every ready\n"
"provider that can list its sandboxes is searched.\n"
"\n"
"  -p, --provider NAME    only this provider\n"
"  -n, --dry-run          print what would be reaped, destroy nothing\n"
"      --any-owner        reap expired sandboxes of any owner too\n"
"      --json             print a JSON array\n"
"  -h, --help             show this help\n"
"\n"
"Exit status: 0 when every expired sandbox was reaped (or none was found),\n"
"1 when one could not be destroyed, 125 when a provider could not list.\n",
        stdout);
}

typedef struct gc_state {
    json_t *arr;        /* --json, else NULL */
    bool dry_run;
    bool failed;        /* a destroy failed */
    bool nomem;
    long long now;
    int reaped;
} gc_state;

static int on_reaped(void *ud, const char *provider, const char *id, int64_t expires,
                     int status, const char *message)
{
    gc_state *st = ud;
    const char *what = status != SBX_OK ? "failed" : st->dry_run ? "would_reap" : "reaped";
    long long ago = st->now - (long long)expires;

    if (status != SBX_OK)
        st->failed = true;
    else
        st->reaped++;
    if (st->arr != NULL) {
        json_t *o = json_pack("{s:s, s:s, s:I, s:s}", "provider", provider, "id", id,
                              "expires_unix", (json_int_t)expires, "status", what);
        if (o != NULL && status != SBX_OK &&
            json_object_set_new(o, "error", json_string(message ? message : "")) != 0) {
            json_decref(o);
            o = NULL;
        }
        if (o == NULL || json_array_append_new(st->arr, o) != 0) {
            st->nomem = true;
            return 1;
        }
        return 0;
    }
    if (status != SBX_OK) {
        cli_err("gc: %s %s: %s", provider, id, message ? message : sbx_strerror(status));
        return 0;
    }
    printf("%s %s %s (expired %llds ago)\n", st->dry_run ? "would reap" : "reaped",
           provider, id, ago > 0 ? ago : 0);
    return 0;
}

static const struct option gc_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { "dry-run", no_argument, NULL, 'n' },
    { "any-owner", no_argument, NULL, 'a' },
    { "json", no_argument, NULL, 'j' },
    { NULL, 0, NULL, 0 }
};

int cli_cmd_gc(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    gc_state st = { 0 };
    unsigned flags = 0;
    bool json = false;
    sbx_ctx *ctx;
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hnp:", gc_opts, NULL)) != -1) {
        switch (c) {
        case 'h': gc_help(); return CLI_EXIT_OK;
        case 'p': provider = optarg; break;
        case 'n': flags |= SBX_GC_DRY_RUN; st.dry_run = true; break;
        case 'a': flags |= SBX_GC_ANY_OWNER; break;
        case 'j': json = true; break;
        default: return cli_bad_option("gc");
        }
    }
    if (optind < argc)
        return cli_usage_error("gc", "unexpected argument '%s'", argv[optind]);
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if (!cli_provider_ok(ctx, provider)) {
        sbx_ctx_free(ctx);
        return CLI_EXIT_ERROR;
    }
    st.now = (long long)time(NULL);
    if (json && (st.arr = json_array()) == NULL) {
        sbx_ctx_free(ctx);
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    rc = sbx_gc(ctx, provider, flags, on_reaped, &st);
    if (st.nomem) {
        cli_err("gc: out of memory");
        json_decref(st.arr);
        rc = CLI_EXIT_ERROR;
    } else {
        /* What was reaped is reported even when a provider failed. */
        int lib = rc;
        rc = json ? cli_print_json(st.arr) : CLI_EXIT_OK;
        if (lib != SBX_OK)
            rc = cli_lib_error(ctx, lib, "gc");
        else if (rc == CLI_EXIT_OK && st.failed)
            rc = CLI_EXIT_FAIL;
        if (!json && !g->quiet && lib == SBX_OK && st.reaped == 0 && !st.failed)
            fputs("polysandbox: gc: no expired sandbox found\n", stderr);
    }
    if (!json && fflush(stdout) != 0 && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_ERROR;
    sbx_ctx_free(ctx);
    return rc;
}
