/* core/cli/cmd-image-build.c - polysandbox image build: make ahead of the
 * first run what a provider caches for an image or a template
 *
 * Provider-generic, through the public API only: one sandbox of that
 * image and template is created and destroyed, so whatever the provider
 * builds and keeps for it (microvm: the image's disk, checked, and the
 * snapshot a VM is restored from) is made now.  The provider's progress
 * is its log (info, unless POLYSANDBOX_LOG says otherwise or -q); what
 * it keeps is its doctor's report, printed after.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static void build_help(void)
{
    fputs("Usage: polysandbox [-p PROVIDER] image build [--template NAME] [IMAGE]\n"
          "Make ahead of the first run what PROVIDER keeps for IMAGE (a pulled image:\n"
          "polysandbox image pull) or a template's image.PROVIDER: one sandbox is\n"
          "created and destroyed, and the provider's progress and doctor report\n"
          "(where it keeps what it built) are printed.  microvm: the image's disk\n"
          "(erofs, or ext4 without mkfs.erofs; reproducible, checked at each use)\n"
          "and the snapshot its VMs are restored from.\n"
          "\n"
          "  -p, --provider NAME    the provider (default: the default provider)\n"
          "  -t, --template NAME    a template (its image.PROVIDER when no IMAGE)\n"
          "  -q, --quiet            print nothing but errors\n"
          "  -h, --help             show this help\n"
          "\n"
          "Exit status: 0 built; 2 an image never pulled or refused, an unknown\n"
          "template; 125 any other error.\n"
          "See polysandbox(1), section image.\n",
          stdout);
}

static void print_check(void *ud, const char *check, bool ok, const char *detail)
{
    (void)ud;
    printf("  %-10s %s %s\n", check, ok ? "ok " : "no ", detail ? detail : "");
}

static const struct option build_opts[] = {{"help", no_argument, NULL, 'h'},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"provider", required_argument, NULL, 'p'},
                                           {"template", required_argument, NULL, 't'},
                                           {NULL, 0, NULL, 0}};

int cli_image_build(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider, *template = NULL;
    bool quiet = g->quiet;
    int c;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hqp:t:", build_opts, NULL)) != -1) {
        switch (c) {
        case 'h': build_help(); return CLI_EXIT_OK;
        case 'q': quiet = true; break;
        case 'p': provider = optarg; break;
        case 't': template = optarg; break;
        default: return cli_bad_option("image build");
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("image build", "unexpected argument '%s'", argv[optind + 1]);
    const char *image = optind < argc ? argv[optind] : NULL;
    if (!image && !template)
        return cli_usage_error("image build", "say an IMAGE, a --template, or both");
    /* The provider's progress: its info log, unless asked otherwise. */
    if (!quiet && setenv("POLYSANDBOX_LOG", "info", 0) != 0) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }

    sbx_ctx *ctx = cli_ctx_new(g);
    if (!ctx)
        return CLI_EXIT_ERROR;
    if (!provider)
        provider = sbx_ctx_default_provider(ctx);
    sbx_create_opts *o = sbx_create_opts_new();
    sbx_sandbox *sb = NULL;
    struct timespec t0, t1;
    int rc = CLI_EXIT_OK, lib;
    if (!o || (provider && sbx_create_opts_set_provider(o, provider) != SBX_OK) ||
        (template && sbx_create_opts_set_template(o, template) != SBX_OK) ||
        (image && sbx_create_opts_set_image(o, image) != SBX_OK)) {
        cli_err("out of memory");
        sbx_create_opts_free(o);
        sbx_ctx_free(ctx);
        return CLI_EXIT_ERROR;
    }
    if (!quiet)
        fprintf(stderr, "polysandbox: image build: %s%s%s%s%s on %s\n", image ? "image " : "",
                image ? image : "", image && template ? ", " : "", template ? "template " : "",
                template ? template : "", provider ? provider : "the default provider");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((lib = sbx_sandbox_create(ctx, o, &sb)) != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(ctx);
        const char *msg = e ? sbx_error_message(e) : NULL;
        rc = cli_lib_error(ctx, lib, "image build");
        /* An image never pulled or refused, an unknown template: usage. */
        if (lib == SBX_E_NOT_FOUND ||
            ((lib == SBX_E_NOTSUP || lib == SBX_E_INVAL) && image && msg && strstr(msg, image)))
            rc = CLI_EXIT_USAGE;
    } else {
        const char *used = sbx_sandbox_provider(sb);
        char *name = strdup(used ? used : "");
        lib = sbx_sandbox_destroy(sb);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (lib != SBX_OK) {
            rc = cli_lib_error(ctx, lib, "image build: destroying its sandbox");
        } else if (!quiet && name) {
            printf("built for %s in %lld ms\n", name,
                   (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
            if (sbx_provider_doctor(ctx, name, print_check, NULL) != SBX_OK)
                printf("  (%s reports nothing it keeps)\n", name);
        }
        free(name);
    }
    sbx_create_opts_free(o);
    sbx_ctx_free(ctx);
    return rc;
}
