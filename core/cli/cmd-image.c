/* core/cli/cmd-image.c - polysandbox image pull|import|list|rm|prune: the
 * local image store (sbx_image_*, <polysandbox/image.h>) */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <polysandbox/image.h>

#include "cli.h"

static void image_help(void)
{
    fputs(
"Usage: polysandbox image pull [--platform OS/ARCH[/VARIANT]] NAME[:TAG|@DIGEST]\n"
"       polysandbox [-p PROVIDER] image build [--template NAME] [NAME]\n"
"       polysandbox image import [--platform OS/ARCH[/VARIANT]] FILE|- [NAME[:TAG]]\n"
"       polysandbox image list [--json]\n"
"       polysandbox image rm NAME[:TAG|@DIGEST]...\n"
"       polysandbox image prune\n"
"Keep OCI images in the state directory: pull fetches an image from its\n"
"registry (the Docker Registry HTTP API v2, anonymous, with the registry's\n"
"token service, or with the username and password of [registry HOST] in\n"
"polysandbox.ini), checks every blob's sha256 digest and unpacks\n"
"its layers into a root directory of its own; import does the same from a\n"
"`docker save` or OCI layout tarball (FILE, or standard input for '-'):\n"
"every image it holds, each under the names it gives, or with NAME its\n"
"only image, or of several the one it names NAME; list prints each\n"
"reference, its digest and its root; rm forgets references, and removes\n"
"the root and blobs no other reference needs; prune removes every blob\n"
"and root no reference needs, and says what it freed.  A NAME without a\n"
"registry is Docker Hub's; 127.0.0.1, localhost and [::1] are spoken to\n"
"over HTTP.\n"
"The local provider runs in a pulled image with 'polysandbox run --image\n"
"NAME' or a template's image.local = NAME; build makes ahead of the first\n"
"run what a provider keeps for an image (see image build --help).\n"
"A multi-platform image (an OCI index, a Docker manifest list) gives its\n"
"entry for --platform, else [core] image_platform, else this machine's\n"
"(linux and uname's machine: linux/amd64, linux/arm64, linux/arm/v7...).\n"
"\n"
"      --platform OS/ARCH[/VARIANT]  pull, import: the platform to take\n"
"  -q, --quiet            pull, import, prune: print nothing but errors\n"
"      --json             list: print a JSON array\n"
"  -h, --help             show this help\n"
"\n"
"Exit status: 0 done; 2 a malformed reference, an image the registry (or,\n"
"for rm, the store) does not have, an index without the platform (its\n"
"platforms are listed), a FILE that does not exist or names no\n"
"image, or of several images none named NAME (the names are listed); 3 a\n"
"layer entry or tarball member escaping the image's root; 65 a blob,\n"
"manifest or tarball refused (digest or size mismatch, unreadable, a name\n"
"given to two images); 125 any other error (network, authentication, the\n"
"store, the configuration or a malformed --platform).\n"
"See polysandbox(1), section image.\n",
        stdout);
}

static int image_exit(const sbx_ctx *ctx, int code, const char *what)
{
    int rc = cli_lib_error(ctx, code, what);
    if (code == SBX_E_PATH)
        return CLI_EXIT_PATH;
    if (code == SBX_E_BACKEND)
        return CLI_EXIT_DATA;
    return rc;
}

static void print_one(const char *ref, const char *digest, const char *root, void *arg)
{
    json_t *arr = arg;
    if (arr) {
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "ref", ref, "digest", digest,
                                             "root", root));
        return;
    }
    printf("%s %s %s\n", ref, digest, root);
}

/* What pull prints: the reference and its digest. */
static void print_short(const char *ref, const char *digest, const char *root, void *arg)
{
    (void)root, (void)arg;
    printf("%s %s\n", ref, digest);
}

static const struct option image_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "quiet", no_argument, NULL, 'q' },
    { "json", no_argument, NULL, 'j' },
    { "platform", required_argument, NULL, 'P' },
    { NULL, 0, NULL, 0 }
};

/* @g with "core.image_platform=@platform" after its -o overrides (so
 * that --platform wins), into @out; @ov and @set to free. */
static bool with_platform(const cli_global *g, const char *platform, cli_global *out,
                          const char ***ov, char **set)
{
    *out = *g;
    *ov = NULL;
    *set = NULL;
    if (!platform)
        return true;
    if (!(*ov = calloc(g->n_overrides + 2, sizeof **ov)) ||
        asprintf(set, "core.image_platform=%s", platform) < 0) {
        *set = NULL;
        cli_err("out of memory");
        return false;
    }
    for (size_t i = 0; i < g->n_overrides; i++)
        (*ov)[i] = g->overrides[i];
    (*ov)[g->n_overrides] = *set;
    out->overrides = *ov;
    out->n_overrides = g->n_overrides + 1;
    return true;
}

int cli_cmd_image(cli_global *g, int argc, char **argv)
{
    bool json = false, quiet = g->quiet;
    const char *platform = NULL;
    int c;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hq", image_opts, NULL)) != -1) {
        switch (c) {
        case 'h': image_help(); return CLI_EXIT_OK;
        case 'q': quiet = true; break;
        case 'j': json = true; break;
        case 'P': platform = optarg; break;
        default: return cli_bad_option("image");
        }
    }
    if (optind >= argc)
        return cli_usage_error("image", "say pull, import, list, rm, prune or build");
    const char *verb = argv[optind++];
    if (strcmp(verb, "build") == 0)   /* its own options (cmd-image-build.c) */
        return cli_image_build(g, argc - optind + 1, argv + optind - 1);
    /* Options may follow the verb too ("image list --json"). */
    int nargs = argc - optind;
    char **args = argv + optind;
    for (int i = 0; i < nargs; i++) {
        if (strcmp(args[i], "--json") == 0)
            json = true, args[i] = NULL;
        else if (strcmp(args[i], "-q") == 0 || strcmp(args[i], "--quiet") == 0)
            quiet = true, args[i] = NULL;
        else if (strncmp(args[i], "--platform=", 11) == 0)
            platform = args[i] + 11, args[i] = NULL;
        else if (strcmp(args[i], "--platform") == 0) {
            if (i + 1 >= nargs)
                return cli_usage_error("image", "--platform takes OS/ARCH[/VARIANT]");
            platform = args[i + 1];
            args[i] = args[i + 1] = NULL;
            i++;
        }
        else if (args[i][0] == '-' && args[i][1] != '\0')   /* "-": standard input */
            return cli_usage_error("image", "unknown option '%s'", args[i]);
    }
    int nnames = 0;
    for (int i = 0; i < nargs; i++)
        if (args[i])
            args[nnames++] = args[i];

    bool pull = strcmp(verb, "pull") == 0, list = strcmp(verb, "list") == 0,
         rm = strcmp(verb, "rm") == 0, import = strcmp(verb, "import") == 0,
         prune = strcmp(verb, "prune") == 0;
    if (!pull && !list && !rm && !import && !prune)
        return cli_usage_error("image", "unknown verb '%s' (pull, import, list, rm or prune)",
                               verb);
    if (pull && nnames != 1)
        return cli_usage_error("image", "pull takes one NAME[:TAG|@DIGEST]");
    if (import && (nnames < 1 || nnames > 2))
        return cli_usage_error("image", "import takes FILE [NAME[:TAG]]");
    if (rm && nnames < 1)
        return cli_usage_error("image", "rm takes NAME[:TAG|@DIGEST]...");
    if ((list || prune) && nnames != 0)
        return cli_usage_error("image", "unexpected argument '%s'", args[0]);
    if (json && !list)
        return cli_usage_error("image", "--json is for image list");
    if (platform && !pull && !import)
        return cli_usage_error("image", "--platform is for image pull and import");

    cli_global pg;
    const char **pov;
    char *pset;
    sbx_ctx *ctx = with_platform(g, platform, &pg, &pov, &pset) ? cli_ctx_new(&pg) : NULL;
    free(pov);
    free(pset);
    if (!ctx)
        return CLI_EXIT_ERROR;
    int rc = CLI_EXIT_OK, lib;
    if (pull) {
        char *digest = NULL;
        if ((lib = sbx_image_pull(ctx, args[0], &digest)) != SBX_OK)
            rc = image_exit(ctx, lib, "image pull");
        else if (!quiet)
            printf("%s %s\n", args[0], digest);
        free(digest);
    } else if (list) {
        json_t *arr = json ? json_array() : NULL;
        if (json && !arr) {
            cli_err("out of memory");
            rc = CLI_EXIT_ERROR;
        } else if ((lib = sbx_image_list(ctx, print_one, arr)) != SBX_OK) {
            json_decref(arr);
            rc = image_exit(ctx, lib, "image list");
        } else if (json) {
            rc = cli_print_json(arr);
        }
    } else if (import) {
        if ((lib = sbx_image_import(ctx, args[0], nnames > 1 ? args[1] : NULL,
                                    quiet ? NULL : print_short, NULL)) != SBX_OK)
            rc = image_exit(ctx, lib, "image import");
    } else if (prune) {
        unsigned blobs, roots;
        uint64_t bytes;
        lib = sbx_image_prune(ctx, &blobs, &roots, &bytes);
        if (!quiet && (blobs || roots || lib == SBX_OK))
            printf("freed %u blob%s and %u root%s, %" PRIu64 " bytes\n", blobs,
                   blobs == 1 ? "" : "s", roots, roots == 1 ? "" : "s", bytes);
        if (lib != SBX_OK)
            rc = image_exit(ctx, lib, "image prune");
    } else {
        for (int i = 0; i < nnames; i++)
            if ((lib = sbx_image_rm(ctx, args[i])) != SBX_OK)
                rc = image_exit(ctx, lib, "image rm");
    }
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_ERROR;
    sbx_ctx_free(ctx);
    return rc;
}
