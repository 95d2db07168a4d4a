/* core/cli/main.c - polysandbox: global options and command dispatch */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "cli.h"

static const struct {
    const char *name;
    cli_cmd_fn fn;
    const char *summary;
} commands[] = {
    { "run", cli_cmd_run, "run code or a command in a new sandbox" },
    { "create", cli_cmd_create, "create a persistent sandbox, print its id" },
    { "exec", cli_cmd_exec, "run in an existing sandbox" },
    { "list", cli_cmd_list, "list the sandboxes of a provider" },
    { "destroy", cli_cmd_destroy, "destroy sandboxes" },
    { "upload", cli_cmd_upload, "copy a file into a sandbox" },
    { "download", cli_cmd_download, "copy a file out of a sandbox" },
    { "files", cli_cmd_files, "list a directory of a sandbox" },
    { "providers", cli_cmd_providers, "list the providers and their state" },
    { "templates", cli_cmd_templates, "list the language templates" },
    { "doctor", cli_cmd_doctor, "check the host for a provider" },
    { "secret", cli_cmd_secret, "create the host key, seal and check credentials" },
    { "gc", cli_cmd_gc, "destroy sandboxes whose time-to-live passed" },
    { "pools", cli_cmd_pools, "start the configured pools, show their state" },
    { "eval", cli_cmd_eval, "score completions on a dataset (HumanEval, MBPP, ...)" },
    { "compare", cli_cmd_compare, "run one evaluation on several providers, side by side" },
    { "image", cli_cmd_image, "pull, list and remove OCI images in the local store" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void main_help(void)
{
    fputs("Usage: polysandbox [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS...]\n"
          "Run untrusted code in any sandbox backend.\n"
          "\n"
          "Commands:\n", stdout);
    for (size_t i = 0; i < N_COMMANDS; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
"Global options:\n"
"      --config-dir DIR   read polysandbox.ini, providers.d/ and templates.d/\n"
"                         from DIR\n"
"  -p, --provider NAME    the provider to use\n"
"  -o, --set SECTION.KEY=VALUE  override a configuration value (repeatable)\n"
"  -q, --quiet            no notes about the program's status on stderr\n"
"  -h, --help             show this help\n"
"      --version          show the version\n"
"\n"
"'polysandbox COMMAND --help' describes a command; see polysandbox(1).\n",
        stdout);
}

/* Writes to a closed pipe fail with EPIPE instead of killing us, so a
 * running sandbox is still cleaned up.  A handler (not SIG_IGN) so that
 * programs started by providers get the default disposition back. */
static void on_sigpipe(int sig)
{
    (void)sig;
}

static int ignore_sigpipe(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigpipe;
    sa.sa_flags = SA_RESTART;
    if (sigemptyset(&sa.sa_mask) != 0 || sigaction(SIGPIPE, &sa, NULL) != 0) {
        cli_err("cannot set up SIGPIPE handling");
        return -1;
    }
    return 0;
}

enum { OPT_CONFIG_DIR = 256, OPT_PROVIDER, OPT_VERSION };

static const struct option global_opts[] = {
    { "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
    { "provider", required_argument, NULL, 'p' },
    { "set", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 }
};

static int parse_global(cli_global *g, int argc, char **argv)
{
    int c;

    while ((c = getopt_long(argc, argv, "+o:qhp:", global_opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG_DIR: g->config_dir = optarg; break;
        case 'p': g->provider = optarg; break;
        case 'o': {
            const char *eq = strchr(optarg, '='), *dot = strchr(optarg, '.');
            const char **no;
            if (eq == NULL || dot == NULL || dot > eq || dot == optarg ||
                dot + 1 == eq)
                return cli_usage_error(NULL, "invalid value '%s' for --set: "
                                       "expected SECTION.KEY=VALUE", optarg);
            no = realloc(g->overrides, (g->n_overrides + 2) * sizeof *no);
            if (no == NULL) {
                cli_err("out of memory");
                return CLI_EXIT_ERROR;
            }
            no[g->n_overrides++] = optarg;
            no[g->n_overrides] = NULL;
            g->overrides = no;
            break;
        }
        case 'q': g->quiet = true; break;
        case 'h': main_help(); return CLI_EXIT_OK;
        case OPT_VERSION: printf("polysandbox %s\n", sbx_version());
            return CLI_EXIT_OK;
        default: return cli_bad_option(NULL);
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    cli_global g = { 0 };
    const char *name;
    int rc;

    if (ignore_sigpipe() != 0)
        return CLI_EXIT_ERROR;
    /* Set-id (or file capabilities): whoever runs us would choose the
     * configuration, the providers and the daemon run with our
     * privileges.  Never installed so; refused outright. */
    if (getauxval(AT_SECURE)) {
        fputs("polysandbox: refusing to run set-user-ID, set-group-ID or with file "
              "capabilities (remove them: chmod u-s,g-s; setcap -r)\n", stderr);
        return CLI_EXIT_ERROR;
    }
    rc = parse_global(&g, argc, argv);
    if (rc >= 0)
        goto out;
    if (optind >= argc) {
        rc = cli_usage_error(NULL, "missing command");
        goto out;
    }
    name = argv[optind];
    /* "polysandbox help [COMMAND]" is "polysandbox [COMMAND] --help" */
    if (strcmp(name, "help") == 0) {
        char *hv[3] = { NULL, (char *)"--help", NULL };
        if (optind + 1 >= argc) {
            main_help();
            rc = CLI_EXIT_OK;
            goto out;
        }
        name = hv[0] = argv[optind + 1];
        for (size_t i = 0; i < N_COMMANDS; i++)
            if (strcmp(commands[i].name, name) == 0) {
                rc = commands[i].fn(&g, 2, hv);
                goto out;
            }
    } else {
        for (size_t i = 0; i < N_COMMANDS; i++)
            if (strcmp(commands[i].name, name) == 0) {
                rc = commands[i].fn(&g, argc - optind, argv + optind);
                goto out;
            }
    }
    rc = cli_usage_error(NULL, "unknown command '%s'", name);
out:
    free(g.overrides);
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_ERROR;
    return rc;
}
