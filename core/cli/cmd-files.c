/* core/cli/cmd-files.c - polysandbox upload and download */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Largest file moved either way unless --max-size says otherwise. */
#define FILES_DEFAULT_MAX ((uint64_t)64 << 20)

static void upload_help(void)
{
    fputs(
"Usage: polysandbox upload [--provider NAME] ID LOCAL REMOTE\n"
"Copy the local file LOCAL (- for standard input) to REMOTE, a path\n"
"relative to the work directory of the sandbox ID.\n"
"\n"
"  -p, --provider NAME    the provider of the sandbox (default: the one that\n"
"                         has ID)\n"
"      --max-size SIZE    refuse files larger than this (default 64M)\n"
"  -h, --help             show this help\n",
        stdout);
}

static void download_help(void)
{
    fputs(
"Usage: polysandbox download [--provider NAME] ID REMOTE [LOCAL|-]\n"
"Copy REMOTE from the sandbox ID to LOCAL (default and '-': standard\n"
"output).\n"
"\n"
"  -p, --provider NAME    the provider of the sandbox (default: the one that\n"
"                         has ID)\n"
"      --max-size SIZE    refuse files larger than this (default 64M)\n"
"  -h, --help             show this help\n",
        stdout);
}

static const struct option file_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { "max-size", required_argument, NULL, 'm' },
    { NULL, 0, NULL, 0 }
};

/* Shared options; returns -1 to go on, else the exit status. */
static int parse(const char *cmd, int argc, char **argv, void (*help)(void),
                 const char **provider, uint64_t *max)
{
    const char *why;
    int c;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hp:", file_opts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); return CLI_EXIT_OK;
        case 'p': *provider = optarg; break;
        case 'm':
            if (!cli_parse_size(optarg, max, &why))
                return cli_usage_error(cmd, "invalid value '%s' for "
                                       "--max-size: %s", optarg, why);
            break;
        default: return cli_bad_option(cmd);
        }
    }
    return -1;
}

int cli_cmd_upload(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    uint64_t max = FILES_DEFAULT_MAX;
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb;
    struct stat st;
    char *data;
    size_t len;
    uint32_t mode = 0644;
    int rc = parse("upload", argc, argv, upload_help, &provider, &max), e;

    if (rc >= 0)
        return rc;
    if (argc - optind < 3)
        return cli_usage_error("upload", "missing argument: ID LOCAL REMOTE");
    if (argc - optind > 3)
        return cli_usage_error("upload", "unexpected argument '%s'",
                               argv[optind + 3]);
    const char *id = argv[optind], *local = argv[optind + 1],
               *remote = argv[optind + 2];
    if (strcmp(local, "-") != 0) {
        if (stat(local, &st) != 0) {
            cli_err("upload: %s: %s", local, strerror(errno));
            return CLI_EXIT_FAIL;
        }
        if (st.st_mode & 0111)
            mode = 0755;
    }
    e = cli_read_file(local, (size_t)max, &data, &len);
    if (e != 0) {
        cli_err("upload: %s: %s", local,
                e == EFBIG ? "larger than --max-size" : strerror(e));
        return CLI_EXIT_FAIL;
    }
    sb = cli_sandbox_open_by_id(g, &ctx, "upload", provider, id, &rc);
    if (sb != NULL) {
        e = sbx_sandbox_upload(sb, remote, data, len, mode);
        rc = e != SBX_OK ? cli_file_exit(ctx, e, "upload", remote) : CLI_EXIT_OK;
        sbx_sandbox_close(sb);
    }
    free(data);
    sbx_ctx_free(ctx);
    return rc;
}

struct blob {
    const void *data;
    size_t len;
};

static int fill_blob(FILE *f, void *ud)
{
    const struct blob *b = ud;

    return fwrite(b->data, 1, b->len, f) == b->len ? 0 : errno ? errno : EIO;
}

static int write_local(const char *local, const void *data, size_t len)
{
    struct blob b = { data, len };
    int e;

    if (strcmp(local, "-") == 0) {
        e = cli_write_all(STDOUT_FILENO, data, len);
        if (e != 0)
            cli_err("download: writing standard output: %s", strerror(e));
        return e == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
    /* whole or not at all: a failed download leaves what was there */
    if ((e = cli_write_file(local, fill_blob, &b)) != 0) {
        cli_err("download: %s: %s", local, strerror(e));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cli_cmd_download(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    uint64_t max = FILES_DEFAULT_MAX;
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb;
    void *data = NULL;
    size_t len = 0;
    int rc = parse("download", argc, argv, download_help, &provider, &max), e;

    if (rc >= 0)
        return rc;
    if (argc - optind < 2)
        return cli_usage_error("download", "missing argument: ID REMOTE");
    if (argc - optind > 3)
        return cli_usage_error("download", "unexpected argument '%s'",
                               argv[optind + 3]);
    const char *id = argv[optind], *remote = argv[optind + 1],
               *local = argc - optind == 3 ? argv[optind + 2] : "-";
    sb = cli_sandbox_open_by_id(g, &ctx, "download", provider, id, &rc);
    if (sb != NULL) {
        e = sbx_sandbox_download(sb, remote, (size_t)max, &data, &len);
        if (e != SBX_OK) {
            rc = cli_file_exit(ctx, e, "download", remote);
            /* a missing file is the caller's mistake, as for cp */
            if (e == SBX_E_NOT_FOUND)
                rc = CLI_EXIT_FAIL;
        } else {
            rc = write_local(local, data, len);
        }
        free(data);
        sbx_sandbox_close(sb);
    }
    sbx_ctx_free(ctx);
    return rc;
}
