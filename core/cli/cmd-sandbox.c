/* core/cli/cmd-sandbox.c - polysandbox create, exec, list and destroy
 *
 * Sandboxes made by create are persistent: they outlive this process and
 * are reached again by id (exec, upload, download, destroy).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"

static void create_help(void)
{
    fputs(
"Usage: polysandbox create [OPTIONS]\n"
"Create a persistent sandbox and print its id.\n"
"\n",
        stdout);
    fputs(cli_help_sandbox, stdout);
    fputs(
"  -e, --env KEY=VALUE    environment of every exec (KEY alone: take ours)\n"
"      --persistent       keep the sandbox after this command (the default)\n"
"      --ttl DURATION     destroy it after this long\n"
"      --get-or-create    print the id of our sandbox that has every --label\n"
"                         (and the --template) if there is one, else create it\n"
"      --json             print {\"id\", \"provider\", \"created\"}\n"
"  -t, --timeout DURATION default wall-clock limit of each exec\n",
        stdout);
    fputs(cli_help_limits, stdout);
}

/* Print what create made or found; false when nobody learns the id. */
static bool print_created(const cli_req *req, const sbx_sandbox *sb, bool created)
{
    if (!req->json)
        return printf("%s\n", sbx_sandbox_id(sb)) >= 0 && fflush(stdout) == 0;
    return cli_print_json(json_pack("{s:s, s:s, s:b}", "id", sbx_sandbox_id(sb),
                                    "provider", sbx_sandbox_provider(sb),
                                    "created", created)) == CLI_EXIT_OK;
}

int cli_cmd_create(cli_global *g, int argc, char **argv)
{
    cli_req req = { .cmd = "create", .provider = g->provider };
    sbx_ctx *ctx = NULL;
    sbx_create_opts *co = NULL;
    sbx_sandbox *sb = NULL;
    bool created = true;
    int rc = cli_req_parse(&req, CLI_OPT_CREATE | CLI_OPT_PERSIST, argc, argv,
                           create_help);

    if (rc >= 0)
        goto out;
    if (req.n_rest > 0) {
        rc = cli_usage_error("create", "unexpected argument '%s'",
                             req.rest[0]);
        goto out;
    }
    if (req.get_or_create && req.n_labels == 0) {
        rc = cli_usage_error("create", "--get-or-create needs at least one "
                             "--label KEY=VALUE to find the sandbox by");
        goto out;
    }
    rc = CLI_EXIT_ERROR;
    if ((ctx = cli_ctx_new(g)) == NULL || !cli_provider_ok(ctx, req.provider) ||
        !cli_providers_ok(ctx, req.fallback))
        goto out;
    if ((co = sbx_create_opts_new()) == NULL) {
        cli_err("out of memory");
        goto out;
    }
    req.persistent = true; /* the point of create: it outlives us */
    if (!cli_req_create_opts(&req, co))
        goto out;
    if (req.get_or_create)
        rc = sbx_sandbox_get_or_create(ctx, co, &sb, &created);
    else
        rc = sbx_sandbox_create(ctx, co, &sb);
    if (rc != SBX_OK) {
        rc = cli_req_create_error(&req, ctx, rc, "create");
        goto out;
    }
    if (!print_created(&req, sb, created)) {
        rc = CLI_EXIT_ERROR;
        if (created) {
            /* nobody learns the id: do not leak the sandbox */
            cli_err("create: cannot print the sandbox id; destroying it");
            sbx_sandbox_destroy(sb);
            sb = NULL;
        }
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    sbx_sandbox_close(sb);
    if (co != NULL)
        sbx_create_opts_free(co);
    sbx_ctx_free(ctx);
    cli_req_free(&req);
    return rc;
}

static void exec_help(void)
{
    fputs(
"Usage: polysandbox exec [OPTIONS] ID -- COMMAND [ARGS...]\n"
"       polysandbox exec [OPTIONS] ID -c CODE --lang LANG [ARGS...]\n"
"       polysandbox exec [OPTIONS] ID --shell LINE\n"
"Run in an existing sandbox (see 'polysandbox create').  Files written by\n"
"one exec are there for the next.\n"
"\n"
"  -p, --provider NAME    the provider of the sandbox (default: the one that\n"
"                         has ID)\n"
"  -c, --code CODE        source code in the language given by --lang\n"
"      --lang LANG        the language template\n"
"  -s, --shell LINE       a command line for /bin/sh -c\n"
"  -e, --env KEY=VALUE    set a variable (KEY alone: take ours, if set)\n"
"      --cwd DIR          working directory inside the sandbox\n"
"      --file LOCAL[:REMOTE]  copy a file into the sandbox first\n"
"  -t, --timeout DURATION wall-clock limit of this exec\n"
"  -i, --stdin            pass our standard input (else it is empty), as\n"
"                         it comes where the provider can stream it\n"
"                         (stdin_stream: local, docker, kubernetes), else\n"
"                         read whole first\n"
"      --json             print the result as one JSON object\n"
"      --artifacts DIR    save the files of the template's artifacts\n"
"                         directory under DIR (never overwriting one)\n"
"  -h, --help             show this help\n"
"\n"
"Output and exit status are those of 'polysandbox run'.\n",
        stdout);
}

int cli_cmd_exec(cli_global *g, int argc, char **argv)
{
    cli_req req = { .cmd = "exec", .provider = g->provider };
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb = NULL;
    sbx_exec_opts *xo = NULL;
    sbx_result *r = NULL;
    const char *id;
    int rc = cli_req_parse(&req, CLI_OPT_EXEC, argc, argv, exec_help);

    if (rc >= 0)
        goto out;
    if (req.n_rest == 0 || req.argv_mode) {
        rc = cli_usage_error("exec", "missing sandbox ID");
        goto out;
    }
    /* Options may follow the ID too: parse again from there. */
    id = req.rest[0];
    rc = cli_req_parse(&req, CLI_OPT_EXEC, req.n_rest, req.rest, exec_help);
    if (rc >= 0)
        goto out;
    rc = CLI_EXIT_ERROR;
    if ((ctx = cli_ctx_new(g)) == NULL || !cli_provider_ok(ctx, req.provider))
        goto out;
    if ((xo = sbx_exec_opts_new()) == NULL) {
        cli_err("out of memory");
        goto out;
    }
    if ((rc = cli_req_exec_opts(&req, ctx, false, xo)) >= 0)
        goto out;
    if ((rc = cli_sandbox_open(ctx, "exec", req.provider, id, &sb)) >= 0 ||
        (rc = cli_req_stdin(&req, ctx, sbx_sandbox_provider(sb), xo)) >= 0 ||
        (rc = cli_interrupt_begin(xo)) >= 0)
        goto out;
    rc = sbx_sandbox_exec(sb, xo, &r);
    if (rc != SBX_OK) {
        rc = cli_lib_error(ctx, rc, "exec");
        goto out;
    }
    rc = cli_report_result(&req, g, r);
out:
    cli_interrupt_end();
    if (r != NULL)
        sbx_result_free(r);
    sbx_sandbox_close(sb);
    if (xo != NULL)
        sbx_exec_opts_free(xo);
    sbx_ctx_free(ctx);
    cli_req_free(&req);
    return rc;
}

/* ---- list ------------------------------------------------------------------ */

static void list_help(void)
{
    fputs(
"Usage: polysandbox list [--provider NAME] [--label KEY=VALUE]... [--json]\n"
"List the sandboxes of a provider: id, age and labels.\n"
"\n"
"  -p, --provider NAME    the provider (default: from the configuration)\n"
"  -l, --label KEY=VALUE  only sandboxes with this label (repeatable: all)\n"
"      --json             print a JSON array\n"
"  -h, --help             show this help\n",
        stdout);
}

typedef struct list_state {
    json_t *arr;        /* --json, else NULL */
    uint64_t now_ns;
    bool failed;
} list_state;

static void format_age(uint64_t ns, char *buf, size_t size)
{
    uint64_t s = ns / UINT64_C(1000000000);

    if (s < 120)
        snprintf(buf, size, "%llus", (unsigned long long)s);
    else if (s < 2 * 3600)
        snprintf(buf, size, "%llum", (unsigned long long)(s / 60));
    else if (s < 2 * 86400)
        snprintf(buf, size, "%lluh", (unsigned long long)(s / 3600));
    else
        snprintf(buf, size, "%llud", (unsigned long long)(s / 86400));
}

static int on_list(void *ud, const char *id, const char *const *labels,
                   size_t n_labels, uint64_t created_unix_ns)
{
    list_state *st = ud;
    uint64_t age = st->now_ns > created_unix_ns && created_unix_ns != 0
                       ? st->now_ns - created_unix_ns : 0;

    if (st->arr != NULL) {
        json_t *o = json_object(), *l = json_object();
        if (o == NULL || l == NULL ||
            json_object_set_new(o, "id", json_string(id)) != 0 ||
            json_object_set_new(o, "created_unix_ns",
                                json_integer((json_int_t)created_unix_ns)) ||
            json_object_set_new(o, "age_s",
                                json_integer((json_int_t)(age / 1000000000))))
            goto fail;
        for (size_t i = 0; i < n_labels; i++) {
            const char *eq = strchr(labels[i], '=');
            char *k = eq ? strndup(labels[i], (size_t)(eq - labels[i]))
                         : strdup(labels[i]);
            int bad = k == NULL ||
                      json_object_set_new(l, k, json_string(eq ? eq + 1 : ""));
            free(k);
            if (bad)
                goto fail;
        }
        if (json_object_set_new(o, "labels", l) != 0) {
            l = NULL;
            goto fail;
        }
        if (json_array_append_new(st->arr, o) != 0) {
            st->failed = true;
            return 1;
        }
        return 0;
fail:
        json_decref(l);
        json_decref(o);
        st->failed = true;
        return 1;
    }

    char agebuf[32];
    if (created_unix_ns != 0)
        format_age(age, agebuf, sizeof agebuf);
    else
        snprintf(agebuf, sizeof agebuf, "-");
    printf("%-40s %-6s ", id, agebuf);
    for (size_t i = 0; i < n_labels; i++)
        printf("%s%s", i ? "," : "", labels[i]);
    putchar('\n');
    return 0;
}

static const struct option list_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { "json", no_argument, NULL, 'j' },
    { "label", required_argument, NULL, 'l' },
    { NULL, 0, NULL, 0 }
};

int cli_cmd_list(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    list_state st = { 0 };
    struct timespec ts;
    bool json = false;
    /* At most one filter per argument: argv's size bounds them. */
    const char **filter = calloc((size_t)argc + 1, sizeof *filter);
    size_t n_filter = 0;
    sbx_ctx *ctx = NULL;
    int c, rc = CLI_EXIT_ERROR;

    if (filter == NULL) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    optind = 0;
    while ((c = getopt_long(argc, argv, "+hl:p:", list_opts, NULL)) != -1) {
        switch (c) {
        case 'h': list_help(); rc = CLI_EXIT_OK; goto out;
        case 'p': provider = optarg; break;
        case 'j': json = true; break;
        case 'l':
            if (optarg[0] == '=' || strchr(optarg, '=') == NULL) {
                rc = cli_usage_error("list", "invalid value '%s' for --label: "
                                     "expected KEY=VALUE", optarg);
                goto out;
            }
            filter[n_filter++] = optarg;
            break;
        default: rc = cli_bad_option("list"); goto out;
        }
    }
    if (optind < argc) {
        rc = cli_usage_error("list", "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if ((ctx = cli_ctx_new(g)) == NULL || !cli_provider_ok(ctx, provider))
        goto out;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
        st.now_ns = (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
                    (uint64_t)ts.tv_nsec;
    if (json && (st.arr = json_array()) == NULL) {
        cli_err("out of memory");
        goto out;
    }
    if (!json)
        printf("%-40s %-6s %s\n", "ID", "AGE", "LABELS");
    rc = sbx_list_labeled(ctx, provider, filter, n_filter, on_list, &st);
    if (rc != SBX_OK && !st.failed) {
        rc = cli_lib_error(ctx, rc, "list");
        json_decref(st.arr);
    } else if (st.failed) {
        cli_err("list: out of memory");
        json_decref(st.arr);
        rc = CLI_EXIT_ERROR;
    } else if (json) {
        rc = cli_print_json(st.arr);
    } else {
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
out:
    sbx_ctx_free(ctx);
    free(filter);
    return rc;
}

/* ---- destroy --------------------------------------------------------------- */

static void destroy_help(void)
{
    fputs(
"Usage: polysandbox destroy [--provider NAME] ID...\n"
"Destroy sandboxes.  Exit status 0 when every one was destroyed, 2 when\n"
"one was not found, 125 on another error.\n"
"\n"
"  -p, --provider NAME    the provider of the sandboxes (default: the one\n"
"                         that has each ID)\n"
"  -h, --help             show this help\n",
        stdout);
}

static const struct option destroy_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { NULL, 0, NULL, 0 }
};

int cli_cmd_destroy(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    sbx_ctx *ctx;
    int c, rc = CLI_EXIT_OK;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hp:", destroy_opts, NULL)) != -1) {
        switch (c) {
        case 'h': destroy_help(); return CLI_EXIT_OK;
        case 'p': provider = optarg; break;
        default: return cli_bad_option("destroy");
        }
    }
    if (optind >= argc)
        return cli_usage_error("destroy", "missing sandbox ID");
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if (!cli_provider_ok(ctx, provider)) {
        sbx_ctx_free(ctx);
        return CLI_EXIT_ERROR;
    }
    for (int i = optind; i < argc; i++) {
        sbx_sandbox *sb = NULL;
        char what[SBX_ID_MAX + 32];
        /* a missing or bad id is the caller's mistake (2); others are
         * ours (125), and say more */
        int e = cli_sandbox_open(ctx, "destroy", provider, argv[i], &sb);

        if (e < 0) {
            int d = sbx_sandbox_destroy(sb);
            if (d == SBX_OK)
                continue;
            snprintf(what, sizeof what, "destroy: sandbox '%s'", argv[i]);
            e = cli_lib_error(ctx, d, what);
        }
        if (rc == CLI_EXIT_OK || e == CLI_EXIT_ERROR)
            rc = e;
    }
    sbx_ctx_free(ctx);
    return rc;
}
