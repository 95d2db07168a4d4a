/* core/cli/request.c - the options shared by run, exec and create
 *
 * One parser (getopt_long with "+", so parsing stops at FILE or after
 * "--") fills a cli_req; each command accepts the option groups that make
 * sense for it and rejects the rest as unknown options.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_LANG = 256, OPT_CWD, OPT_FILE, OPT_JSON, OPT_NO_STDIN,
    OPT_TEMPLATE, OPT_IMAGE, OPT_MEMORY, OPT_CPU, OPT_PIDS,
    OPT_DISK, OPT_OUTPUT_LIMIT, OPT_NETWORK, OPT_PERSISTENT, OPT_TTL,
    OPT_GET_OR_CREATE, OPT_FALLBACK, OPT_KEEP, OPT_REUSE, OPT_ARTIFACTS, OPT_DEPS
};

/* Every option with the groups that take it (0: every command). */
static const struct {
    struct option opt;
    unsigned groups;
} all_opts[] = {
    { { "help", no_argument, NULL, 'h' }, 0 },
    { { "provider", required_argument, NULL, 'p' }, 0 },
    { { "env", required_argument, NULL, 'e' }, 0 },
    { { "timeout", required_argument, NULL, 't' }, 0 },
    { { "lang", required_argument, NULL, OPT_LANG }, CLI_OPT_EXEC },
    { { "code", required_argument, NULL, 'c' }, CLI_OPT_EXEC },
    { { "shell", required_argument, NULL, 's' }, CLI_OPT_EXEC },
    { { "cwd", required_argument, NULL, OPT_CWD }, CLI_OPT_EXEC },
    { { "file", required_argument, NULL, OPT_FILE }, CLI_OPT_EXEC },
    { { "json", no_argument, NULL, OPT_JSON }, CLI_OPT_EXEC | CLI_OPT_PERSIST },
    { { "artifacts", required_argument, NULL, OPT_ARTIFACTS }, CLI_OPT_EXEC },
    { { "stdin", no_argument, NULL, 'i' }, CLI_OPT_EXEC },
    { { "no-stdin", no_argument, NULL, OPT_NO_STDIN }, CLI_OPT_EXEC },
    { { "fallback", required_argument, NULL, OPT_FALLBACK }, CLI_OPT_CREATE },
    { { "template", required_argument, NULL, OPT_TEMPLATE }, CLI_OPT_CREATE },
    { { "image", required_argument, NULL, OPT_IMAGE }, CLI_OPT_CREATE },
    { { "label", required_argument, NULL, 'l' }, CLI_OPT_CREATE },
    { { "memory", required_argument, NULL, OPT_MEMORY }, CLI_OPT_CREATE },
    { { "cpu", required_argument, NULL, OPT_CPU }, CLI_OPT_CREATE },
    { { "pids", required_argument, NULL, OPT_PIDS }, CLI_OPT_CREATE },
    { { "disk", required_argument, NULL, OPT_DISK }, CLI_OPT_CREATE },
    { { "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
      CLI_OPT_CREATE },
    { { "network", required_argument, NULL, OPT_NETWORK }, CLI_OPT_CREATE },
    { { "persistent", no_argument, NULL, OPT_PERSISTENT }, CLI_OPT_PERSIST },
    { { "ttl", required_argument, NULL, OPT_TTL }, CLI_OPT_PERSIST },
    { { "get-or-create", no_argument, NULL, OPT_GET_OR_CREATE },
      CLI_OPT_PERSIST },
    { { "keep", no_argument, NULL, OPT_KEEP }, CLI_OPT_RUN },
    { { "reuse", no_argument, NULL, OPT_REUSE }, CLI_OPT_RUN },
    { { "deps", no_argument, NULL, OPT_DEPS }, CLI_OPT_RUN },
};
#define N_OPTS (sizeof all_opts / sizeof all_opts[0])

static bool push(char ***arr, size_t *n, char *s)
{
    char **na = realloc(*arr, (*n + 1) * sizeof **arr);

    if (na == NULL) {
        cli_err("out of memory");
        return false;
    }
    na[(*n)++] = s;
    *arr = na;
    return true;
}

/* Parse a value of @opt with @parse; a bad value is a usage error naming
 * the option. */
static bool value(const cli_req *req, const char *opt, const char *arg,
                  bool (*parse)(const char *, uint64_t *, const char **),
                  uint64_t *out)
{
    const char *why = "is not valid";

    if (parse(arg, out, &why))
        return true;
    cli_usage_error(req->cmd, "invalid value '%s' for %s: %s", arg, opt, why);
    return false;
}

static bool limit(cli_req *req, sbx_limit which, const char *opt,
                  const char *arg,
                  bool (*parse)(const char *, uint64_t *, const char **))
{
    return value(req, opt, arg, parse, &req->limits[which]);
}

int cli_req_parse(cli_req *req, unsigned which, int argc, char **argv,
                  void (*help)(void))
{
    struct option longs[N_OPTS + 1];
    char shorts[24] = "+hp:e:t:";
    const char *last_arg = NULL;
    size_t n = 0;
    int c;

    for (size_t i = 0; i < N_OPTS; i++)
        if (all_opts[i].groups == 0 || (all_opts[i].groups & which))
            longs[n++] = all_opts[i].opt;
    memset(&longs[n], 0, sizeof longs[n]);
    if (which & CLI_OPT_EXEC)
        strcat(shorts, "c:s:i");
    if (which & CLI_OPT_CREATE)
        strcat(shorts, "l:");

    optind = 0; /* glibc: start afresh, re-reading the "+" */
    for (;;) {
        optarg = NULL;
        c = getopt_long(argc, argv, shorts, longs, NULL);
        if (c == -1)
            break;
        if (optarg != NULL)
            last_arg = optarg;
        switch (c) {
        case 'h':
            help();
            return CLI_EXIT_OK;
        case 'p': req->provider = optarg; break;
        case OPT_FALLBACK:
            if (!cli_names_ok(optarg))
                return cli_usage_error(req->cmd, "invalid value '%s' for --fallback: "
                                       "expected NAME[,NAME...]", optarg);
            req->fallback = optarg;
            break;
        case 'e':
            if (!push(&req->env, &req->n_env, optarg))
                return CLI_EXIT_ERROR;
            if (optarg[0] == '\0' || optarg[0] == '=')
                return cli_usage_error(req->cmd,
                                       "invalid value '%s' for --env: "
                                       "expected KEY=VALUE or KEY", optarg);
            break;
        case 't':
            if (!value(req, "--timeout", optarg, cli_parse_duration,
                       &req->timeout_ns))
                return CLI_EXIT_USAGE;
            req->timeout_text = optarg;
            break;
        case OPT_LANG: req->lang = optarg; break;
        case 'c': req->code = optarg; break;
        case 's': req->shell = optarg; break;
        case OPT_CWD: req->cwd = optarg; break;
        case OPT_FILE:
            if (optarg[0] == '\0' || optarg[0] == ':')
                return cli_usage_error(req->cmd,
                                       "invalid value '%s' for --file: "
                                       "expected LOCAL[:REMOTE]", optarg);
            if (!push(&req->files, &req->n_files, optarg))
                return CLI_EXIT_ERROR;
            break;
        case OPT_JSON: req->json = true; break;
        case OPT_ARTIFACTS:
            if (!*optarg)
                return cli_usage_error(req->cmd, "--artifacts needs a directory");
            req->artifacts_dir = optarg;
            break;
        case 'i': req->stdin = true; break;
        case OPT_NO_STDIN: req->stdin = false; break;
        case OPT_TEMPLATE: req->template_name = optarg; break;
        case OPT_IMAGE: req->image = optarg; break;
        case 'l': {
            char *k;
            const char *v;
            if (!cli_split_kv(optarg, &k, &v))
                return cli_usage_error(req->cmd,
                                       "invalid value '%s' for --label: "
                                       "expected KEY=VALUE", optarg);
            free(k);
            if (!push(&req->labels, &req->n_labels, optarg))
                return CLI_EXIT_ERROR;
            break;
        }
        case OPT_MEMORY:
            if (!limit(req, SBX_LIMIT_MEMORY, "--memory", optarg,
                       cli_parse_size))
                return CLI_EXIT_USAGE;
            break;
        case OPT_CPU:
            if (!limit(req, SBX_LIMIT_CPU, "--cpu", optarg,
                       cli_parse_duration))
                return CLI_EXIT_USAGE;
            break;
        case OPT_PIDS:
            if (!limit(req, SBX_LIMIT_PIDS, "--pids", optarg,
                       cli_parse_count))
                return CLI_EXIT_USAGE;
            break;
        case OPT_DISK:
            if (!limit(req, SBX_LIMIT_DISK, "--disk", optarg, cli_parse_size))
                return CLI_EXIT_USAGE;
            break;
        case OPT_OUTPUT_LIMIT:
            if (!limit(req, SBX_LIMIT_STDOUT, "--output-limit", optarg,
                       cli_parse_size))
                return CLI_EXIT_USAGE;
            req->limits[SBX_LIMIT_STDERR] = req->limits[SBX_LIMIT_STDOUT];
            break;
        case OPT_NETWORK:
            if (strcmp(optarg, "none") == 0)
                req->network = SBX_NET_NONE;
            else if (strcmp(optarg, "host") == 0)
                req->network = SBX_NET_HOST;
            else if (strcmp(optarg, "egress") == 0)
                req->network = SBX_NET_EGRESS;
            else
                return cli_usage_error(req->cmd,
                                       "invalid value '%s' for --network: "
                                       "expected none, egress or host", optarg);
            req->network_set = true;
            break;
        case OPT_PERSISTENT: req->persistent = true; break;
        case OPT_GET_OR_CREATE: req->get_or_create = true; break;
        case OPT_KEEP: req->keep = true; break;
        case OPT_REUSE: req->reuse = true; break;
        case OPT_DEPS: req->deps = true; break;
        case OPT_TTL:
            if (!value(req, "--ttl", optarg, cli_parse_duration, &req->ttl_ns))
                return CLI_EXIT_USAGE;
            break;
        default: /* getopt_long printed what was wrong */
            return cli_bad_option(req->cmd);
        }
    }
    /* "--" ends the options: what follows is a command line (argv),
     * unless that "--" was the value of an option (-e --). */
    req->argv_mode = optind > 0 && optind <= argc &&
                     strcmp(argv[optind - 1], "--") == 0 &&
                     argv[optind - 1] != last_arg;
    req->rest = argv + optind;
    req->n_rest = argc - optind;
    return -1;
}

void cli_req_free(cli_req *req)
{
    free(req->env);
    free(req->labels);
    free(req->files);
    memset(req, 0, sizeof *req);
}

bool cli_req_create_opts(const cli_req *req, sbx_create_opts *o)
{
    static const char *const names[SBX_LIMIT_COUNT] = {
        "--timeout", "--cpu", "--memory", "--pids", "nofile", "fsize",
        "--disk", "--output-limit", "--output-limit"
    };
    int rc = SBX_OK;

    if (req->provider != NULL)
        rc = sbx_create_opts_set_provider(o, req->provider);
    if (rc == SBX_OK && req->fallback != NULL) {
        char **chain = cli_split_names(req->fallback);
        rc = chain ? sbx_create_opts_set_fallback(o, (const char *const *)chain) : SBX_E_NOMEM;
        free(chain);
    }
    if (rc == SBX_OK && req->template_name != NULL)
        rc = sbx_create_opts_set_template(o, req->template_name);
    if (rc == SBX_OK && req->image != NULL)
        rc = sbx_create_opts_set_image(o, req->image);
    if (rc == SBX_OK && req->network_set)
        rc = sbx_create_opts_set_network(o, req->network);
    if (rc == SBX_OK && req->persistent)
        rc = sbx_create_opts_set_persistent(o, true);
    if (rc == SBX_OK && req->ttl_ns != 0)
        rc = sbx_create_opts_set_ttl(o, req->ttl_ns);
    if (rc != SBX_OK) {
        cli_err("%s: %s", req->cmd, sbx_strerror(rc));
        return false;
    }
    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (req->limits[i] == 0)
            continue;
        rc = sbx_create_opts_set_limit(o, (sbx_limit)i, req->limits[i]);
        if (rc != SBX_OK) {
            cli_err("%s: %s: %s", req->cmd, names[i], sbx_strerror(rc));
            return false;
        }
    }
    /* create: the timeout is the default wall limit of each exec. */
    if (strcmp(req->cmd, "create") == 0 && req->timeout_ns != 0) {
        rc = sbx_create_opts_set_limit(o, SBX_LIMIT_WALL, req->timeout_ns);
        if (rc != SBX_OK) {
            cli_err("%s: --timeout: %s", req->cmd, sbx_strerror(rc));
            return false;
        }
    }
    for (size_t i = 0; i < req->n_labels; i++) {
        char *k;
        const char *v;
        if (!cli_split_kv(req->labels[i], &k, &v)) {
            cli_err("out of memory");
            return false;
        }
        rc = sbx_create_opts_add_label(o, k, v);
        free(k);
        if (rc != SBX_OK) {
            cli_err("%s: --label %s: %s", req->cmd, req->labels[i],
                    sbx_strerror(rc));
            return false;
        }
    }
    if (strcmp(req->cmd, "create") == 0) {
        for (size_t i = 0; i < req->n_env; i++) {
            char *k;
            const char *v;
            bool split = strchr(req->env[i], '=') != NULL;
            if (split && !cli_split_kv(req->env[i], &k, &v)) {
                cli_err("out of memory");
                return false;
            }
            if (!split) {
                v = getenv(req->env[i]);
                if (v == NULL)
                    continue; /* as docker: an unset variable is skipped */
                k = strdup(req->env[i]);
                if (k == NULL) {
                    cli_err("out of memory");
                    return false;
                }
            }
            rc = sbx_create_opts_add_env(o, k, v);
            free(k);
            if (rc != SBX_OK) {
                cli_err("%s: --env %s: %s", req->cmd, req->env[i],
                        sbx_strerror(rc));
                return false;
            }
        }
    }
    return true;
}

/* Help lines of the options parsed here for run and create alike. */
const char cli_help_sandbox[] =
"  -p, --provider NAME    the provider (default: from the configuration)\n"
"      --fallback NAME[,NAME...]  providers to try, in order, when creating\n"
"                         the sandbox on the first fails\n"
"      --template NAME    the template (language runtime) of the sandbox\n"
"      --image IMAGE      the image: on local one pulled (polysandbox image pull)\n"
"                         or a root directory, else the provider's image name\n"
"  -l, --label KEY=VALUE  label the sandbox (repeatable)\n";

const char cli_help_limits[] =
"      --cpu DURATION     CPU-time limit\n"
"      --memory SIZE      memory limit (e.g. 256M, 1G)\n"
"      --pids N           process limit\n"
"      --disk SIZE        size of the writable work area\n"
"      --output-limit SIZE  cap of stdout and of stderr each\n"
"      --network none|egress|host  network policy: none narrows a template's\n"
"                         egress; egress only where the template allows it;\n"
"                         host is unsafe\n"
"  -h, --help             show this help\n";

bool cli_req_image_refused(const cli_req *req, int code, const char *msg)
{
    /* (the refusal names the image; another NOTSUP is not about it; an
     * image not pulled is NOT_FOUND, 2 as well) */
    return (code == SBX_E_NOTSUP || code == SBX_E_NOT_FOUND || code == SBX_E_INVAL) &&
           req->image != NULL && msg != NULL && strstr(msg, req->image) != NULL;
}

int cli_req_create_error(const cli_req *req, const sbx_ctx *ctx, int code, const char *what)
{
    const sbx_error *e = ctx ? sbx_ctx_last_error(ctx) : NULL;
    const char *msg = e ? sbx_error_message(e) : NULL;
    char opt[512];

    if (!cli_req_image_refused(req, code, msg))
        return cli_lib_error(ctx, code, what);
    snprintf(opt, sizeof opt, "%s: --image %s", what, req->image);
    cli_lib_error(ctx, code, opt);
    return CLI_EXIT_USAGE;
}
