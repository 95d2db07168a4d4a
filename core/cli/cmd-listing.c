/* core/cli/cmd-listing.c - polysandbox files: a directory of a sandbox
 *
 * Names come from the sandbox (any byte but '/' and NUL): the text form
 * escapes what a terminal would act on and what is not UTF-8, so one
 * entry is one line; --json
 * gives polysandboxd's objects of GET /v1/sandboxes/{id}/files.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "../server/file-json.h"
#include "../server/json-text.h"
#include "../server/utf8.h"

#define LIST_DEFAULT 1000u
#define LIST_LIMIT 100000u

static void files_help(void)
{
    fputs(
"Usage: polysandbox files [--provider NAME] [--json] [--limit N] ID [PATH]\n"
"List the directory PATH (default: the work directory) of the sandbox ID,\n"
"sorted by name, one entry a line: type, size in bytes, modification time\n"
"(UTC) and name.  PATH is relative to the work directory, without '..'.\n"
"\n"
"  -p, --provider NAME    the provider of the sandbox (default: the one that\n"
"                         has ID)\n"
"      --json             print polysandboxd's listing object\n"
"      --limit N          list at most N entries (default 1000, at most\n"
"                         100000)\n"
"  -h, --help             show this help\n"
"\n"
"Exit status: 0 listed, 1 PATH is not a directory in the sandbox, 2 bad\n"
"usage or no sandbox ID, 3 PATH escapes the work directory, 125 error.\n",
        stdout);
}

static const struct option files_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { "json", no_argument, NULL, 'j' },
    { "limit", required_argument, NULL, 'l' },
    { NULL, 0, NULL, 0 }
};

struct listing {
    json_t *arr;      /* --json: the entries; else NULL */
    bool failed;      /* writing stdout failed */
};

/* One line: "TYPE SIZE MTIME NAME", the name's '\\', newline and tab as
 * \\, \n, \t, and as \xHH every other control character (C0, DEL, C1
 * in UTF-8) and every byte that is not part of valid UTF-8: no name can
 * make two lines or speak to the terminal. */
static int print_entry(const char *name, size_t len, sbx_file_type type, uint64_t size,
                       int64_t mtime)
{
    const unsigned char *p = (const unsigned char *)name;
    char when[32] = "-";
    struct tm tm;
    time_t t = (time_t)mtime;

    if (gmtime_r(&t, &tm) != NULL)
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("%-9s %12" PRIu64 " %s ", sbx_file_type_name(type), size, when);
    for (size_t i = 0, k; i < len; i += k) {
        k = srv_utf8_seq(p + i, len - i);
        if (k == 1 && p[i] == '\\')
            fputs("\\\\", stdout);
        else if (k == 1 && p[i] == '\n')
            fputs("\\n", stdout);
        else if (k == 1 && p[i] == '\t')
            fputs("\\t", stdout);
        else if (k == 0 || (k == 1 && (p[i] < 0x20 || p[i] == 0x7f)) ||
                 (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)) {
            k = k ? k : 1;
            for (size_t j = 0; j < k; j++)
                printf("\\x%02x", p[i + j]);
        } else {
            fwrite(p + i, 1, k, stdout);
        }
    }
    return putchar('\n') == EOF ? -1 : 0;
}

static int on_file(void *ud, const char *name, size_t len, sbx_file_type type, uint64_t size,
                   int64_t mtime)
{
    struct listing *l = ud;
    json_t *e;

    if (l->arr == NULL) {
        if (print_entry(name, len, type, size, mtime) != 0) {
            l->failed = true;
            return SBX_E_IO;
        }
        return 0;
    }
    if ((e = srv_file_json(name, len, type, size, mtime)) == NULL ||
        json_array_append_new(l->arr, e) != 0)
        return SBX_E_NOMEM;
    return 0;
}

/* The exit status for a failed listing of @dir. */
static int list_error(const sbx_ctx *ctx, int code, const char *dir)
{
    int rc = cli_file_exit(ctx, code, "files", dir);

    return code == SBX_E_NOT_FOUND ? CLI_EXIT_FAIL   /* no such directory, as for ls */
                                   : rc;
}

int cli_cmd_files(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider, *why;
    uint64_t max = LIST_DEFAULT;
    struct listing l = { NULL, false };
    bool json = false, more = false;
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb;
    int c, rc, e;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hp:", files_opts, NULL)) != -1) {
        switch (c) {
        case 'h': files_help(); return CLI_EXIT_OK;
        case 'p': provider = optarg; break;
        case 'j': json = true; break;
        case 'l':
            if (!cli_parse_count(optarg, &max, &why))
                return cli_usage_error("files", "invalid value '%s' for --limit: %s", optarg,
                                       why);
            if (max > LIST_LIMIT)
                return cli_usage_error("files", "invalid value '%s' for --limit: at most %u",
                                       optarg, LIST_LIMIT);
            break;
        default: return cli_bad_option("files");
        }
    }
    if (argc - optind < 1)
        return cli_usage_error("files", "missing argument: ID");
    if (argc - optind > 2)
        return cli_usage_error("files", "unexpected argument '%s'", argv[optind + 2]);
    const char *id = argv[optind], *dir = argc - optind == 2 ? argv[optind + 1] : ".";
    if (*dir == '\0')
        dir = ".";
    if ((sb = cli_sandbox_open_by_id(g, &ctx, "files", provider, id, &rc)) == NULL) {
        sbx_ctx_free(ctx);
        return rc;
    }
    if (json && (l.arr = json_array()) == NULL) {
        cli_err("out of memory");
        rc = CLI_EXIT_ERROR;
    } else if ((e = sbx_sandbox_list_files(sb, dir, (size_t)max, on_file, &l, &more)) != SBX_OK) {
        if (l.failed)
            cli_err("files: writing standard output failed");
        rc = l.failed ? CLI_EXIT_ERROR : list_error(ctx, e, dir);
    } else if (json) {
        rc = cli_print_json(json_pack("{s:s, s:o, s:O, s:b}", "sandbox_id", sbx_sandbox_id(sb),
                                      "path", srv_json_text(dir, strlen(dir)), "entries", l.arr,
                                      "truncated", more));
    } else {
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
        if (rc != CLI_EXIT_OK)
            cli_err("files: writing standard output failed");
        else if (more && !g->quiet)
            cli_err("files: %s: more than %" PRIu64 " entries, only the first listed "
                    "(--limit)", dir, max);
    }
    json_decref(l.arr);
    sbx_sandbox_close(sb);
    sbx_ctx_free(ctx);
    return rc;
}
