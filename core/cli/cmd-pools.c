/* core/cli/cmd-pools.c - polysandbox pools: start the configured pools,
 * show their state and statistics
 *
 * A pool lives as long as the process that holds it; this command is a
 * check of the configuration and of how fast a provider fills a pool.
 * Long-lived users of the library (the server, eval) keep theirs.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

#define DEFAULT_WAIT_NS (UINT64_C(60) * 1000000000u)

static void pools_help(void)
{
    fputs(
"Usage: polysandbox pools [--wait[=DURATION]] [--json]\n"
"Start the pools configured in pools.d/ (and with -o pool.NAME.KEY=VALUE),\n"
"print each one's key, state and statistics, then stop them, destroying\n"
"the sandboxes they hold.  With --wait, first wait until every pool holds\n"
"its size in ready sandboxes (at most DURATION, default 60s).\n"
"\n"
"      --wait[=DURATION]  wait for the pools to fill\n"
"      --json             print a JSON array\n"
"  -h, --help             show this help\n"
"\n"
"Exit status: 0 when every pool runs (and, with --wait, filled in time),\n"
"1 when one does not, 125 on a configuration error.\n",
        stdout);
}

static const struct option pools_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "wait", optional_argument, NULL, 'w' },
    { "json", no_argument, NULL, 'j' },
    { NULL, 0, NULL, 0 }
};

int cli_cmd_pools(cli_global *g, int argc, char **argv)
{
    uint64_t wait_ns = 0;
    bool json = false, all_ok = true;
    json_t *arr = NULL;
    sbx_ctx *ctx;
    const char *why;
    int c, rc = CLI_EXIT_OK;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", pools_opts, NULL)) != -1) {
        switch (c) {
        case 'h': pools_help(); return CLI_EXIT_OK;
        case 'w':
            wait_ns = DEFAULT_WAIT_NS;
            if (optarg != NULL && !cli_parse_duration(optarg, &wait_ns, &why))
                return cli_usage_error("pools", "invalid value '%s' for --wait: %s",
                                       optarg, why);
            break;
        case 'j': json = true; break;
        default: return cli_bad_option("pools");
        }
    }
    if (optind < argc)
        return cli_usage_error("pools", "unexpected argument '%s'", argv[optind]);
    g->pools = true;
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if (json && (arr = json_array()) == NULL) {
        sbx_ctx_free(ctx);
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    if (sbx_ctx_pool_count(ctx) == 0 && !g->quiet)
        fputs("polysandbox: pools: no pool is configured (see pools.d/ in "
              "polysandbox.ini(5))\n", stderr);
    if (wait_ns != 0 && sbx_ctx_pool_count(ctx) > 0 &&
        sbx_pool_wait(ctx, NULL, wait_ns) != SBX_OK) {
        cli_lib_error(ctx, SBX_E_TIMEOUT, "pools");
        all_ok = false;
    }
    if (!json && sbx_ctx_pool_count(ctx) > 0)
        printf("%-16s %-10s %-10s %5s %5s %7s %8s %11s %s\n", "NAME", "PROVIDER",
               "TEMPLATE", "SIZE", "READY", "CREATED", "FAILURES", "CREATE_MEAN",
               "STATE");
    for (size_t i = 0; i < sbx_ctx_pool_count(ctx); i++) {
        const char *name = sbx_ctx_pool_name(ctx, i);
        uint64_t v[SBX_POOL_STAT_COUNT];
        char err[1200] = "", mean[32];

        if (sbx_pool_stats(ctx, name, v, SBX_POOL_STAT_COUNT) != SBX_OK ||
            sbx_pool_last_error(ctx, name, err, sizeof err) != SBX_OK) {
            rc = cli_lib_error(ctx, SBX_E_INTERNAL, "pools");
            break;
        }
        if (!v[SBX_POOL_STAT_ACTIVE] && v[SBX_POOL_STAT_SIZE] > 0)
            all_ok = false;
        if (json) {
            json_t *o = cli_pool_json(ctx, name, v, err);
            if (o == NULL || json_array_append_new(arr, o) != 0) {
                cli_err("out of memory building JSON");
                rc = CLI_EXIT_ERROR;
                break;
            }
            continue;
        }
        snprintf(mean, sizeof mean, "%.1fms", (double)v[SBX_POOL_STAT_CREATE_MEAN_NS] / 1e6);
        printf("%-16s %-10s %-10s %5llu %5llu %7llu %8llu %11s %s%s%s\n", name,
               sbx_pool_provider(ctx, name) ? sbx_pool_provider(ctx, name) : "-",
               sbx_pool_template(ctx, name) ? sbx_pool_template(ctx, name) : "-",
               (unsigned long long)v[SBX_POOL_STAT_SIZE],
               (unsigned long long)v[SBX_POOL_STAT_READY],
               (unsigned long long)v[SBX_POOL_STAT_CREATED],
               (unsigned long long)v[SBX_POOL_STAT_FAILURES],
               v[SBX_POOL_STAT_CREATED] ? mean : "-",
               v[SBX_POOL_STAT_ACTIVE] ? "running" : "stopped",
               *err ? ": " : "", err);
    }
    if (json) {
        if (rc == CLI_EXIT_OK)
            rc = cli_print_json(arr);
        else
            json_decref(arr);
    } else if (fflush(stdout) != 0 && rc == CLI_EXIT_OK) {
        rc = CLI_EXIT_ERROR;
    }
    if (rc == CLI_EXIT_OK && !all_ok)
        rc = CLI_EXIT_FAIL;
    sbx_ctx_free(ctx);
    return rc;
}
