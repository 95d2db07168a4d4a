/* core/server/main.c - polysandboxd: options, start, signals, shutdown
 *
 * SIGTERM or SIGINT: stop accepting, let the requests in flight finish
 * for up to [server] grace, then cancel them, wait for the workers,
 * destroy the sandboxes this server made, and exit 0.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "server-int.h"

static void usage(FILE *f)
{
    fputs("Usage: polysandboxd [OPTIONS]\n"
          "Serve the PolySandbox API over HTTP: runs, sandboxes, metrics.\n"
          "\n"
          "  -l, --listen ADDR:PORT   listen there (default 127.0.0.1:8780; port 0 picks a\n"
          "                           free port, logged at start)\n"
          "      --token-file FILE    bearer tokens, one per line (mode 0600); required\n"
          "                           for an address that is not loopback\n"
          "      --config-dir DIR     read polysandbox.ini, providers.d/ and templates.d/\n"
          "                           from DIR\n"
          "  -o, --set SECTION.KEY=VALUE  override a configuration value (repeatable),\n"
          "                           e.g. server.workers=8 or limits.memory=1G\n"
          "      --routes             list the routes this configuration serves and exit\n"
          "  -h, --help               show this help\n"
          "      --version            show the version\n"
          "\n"
          "[server] in polysandbox.ini holds the same settings and more; see\n"
          "polysandboxd(8) and polysandbox.ini(5).\n",
          f);
}

static void on_sigpipe(int sig)
{
    (void)sig;
}

enum { OPT_TOKEN_FILE = 256, OPT_CONFIG_DIR, OPT_VERSION, OPT_ROUTES };

struct args {
    const char *listen, *token_file, *config_dir;
    const char **overrides;
    size_t n_overrides;
    bool routes;
};

static int parse_args(struct args *a, int argc, char **argv)
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },
        { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
        { "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
        { "set", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPT_VERSION },
        { "routes", no_argument, NULL, OPT_ROUTES },
        { NULL, 0, NULL, 0 }
    };
    int c;

    while ((c = getopt_long(argc, argv, "l:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': a->listen = optarg; break;
        case OPT_TOKEN_FILE: a->token_file = optarg; break;
        case OPT_CONFIG_DIR: a->config_dir = optarg; break;
        case 'o': {
            const char *eq = strchr(optarg, '='), *dot = strchr(optarg, '.');
            const char **no;
            if (!eq || !dot || dot > eq || dot == optarg || dot + 1 == eq) {
                fprintf(stderr, "polysandboxd: invalid value '%s' for --set: expected "
                        "SECTION.KEY=VALUE\nTry 'polysandboxd --help'.\n", optarg);
                return SRV_EXIT_USAGE;
            }
            if (!(no = realloc(a->overrides, (a->n_overrides + 2) * sizeof *no))) {
                fputs("polysandboxd: out of memory\n", stderr);
                return SRV_EXIT_FAIL;
            }
            no[a->n_overrides++] = optarg;
            no[a->n_overrides] = NULL;
            a->overrides = no;
            break;
        }
        case 'h': usage(stdout); return SRV_EXIT_OK;
        case OPT_VERSION: printf("polysandboxd %s\n", sbx_version()); return SRV_EXIT_OK;
        case OPT_ROUTES: a->routes = true; break;
        default:
            fputs("Try 'polysandboxd --help'.\n", stderr);
            return SRV_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "polysandboxd: unexpected argument '%s'\nTry 'polysandboxd "
                "--help'.\n", argv[optind]);
        return SRV_EXIT_USAGE;
    }
    return -1;
}

/* Load every enabled provider now, so that the first request, /readyz and
 * /metrics do not pay for it. */
static void preload(srv *s)
{
    size_t n = sbx_ctx_provider_count(s->ctx);

    for (size_t i = 0; i < n; i++) {
        const sbx_provider *p = sbx_ctx_provider(s->ctx, i);
        if (sbx_provider_get_state(p) == SBX_PROVIDER_UNAVAILABLE)
            srv_log(NULL, "provider %s is unavailable: %s", sbx_provider_name(p),
                    sbx_provider_reason(p));
    }
}

/* --routes: "METHOD PATTERN" per line, as the OpenAPI document and the
 * man page name them ({path*} as {path}). */
static int print_routes(srv *s)
{
    static const char *const names[] = { "GET", "POST", "PUT", "DELETE" };

    for (size_t i = 0; i < srv_router_count(s->router); i++) {
        const srv_route *rt = srv_router_at(s->router, i);
        for (int m = 0; m < 4; m++) {
            if (!(rt->methods & (1u << m)))
                continue;
            for (const char *c = rt->pattern; *c; c++)
                if (*c != '*')
                    putchar(*c);
            printf(" %s\n", names[m]);
        }
    }
    return fflush(stdout) == 0 ? SRV_EXIT_OK : SRV_EXIT_FAIL;
}

static int configure(srv *s, const struct args *a)
{
    const sbx_error *e;
    int rc;

    rc = sbx_ctx_new_with(&s->ctx, a->config_dir, a->overrides);
    if (rc != SBX_OK) {
        e = sbx_ctx_last_error(s->ctx);
        fprintf(stderr, "polysandboxd: %s\n", s->ctx && sbx_error_message(e)[0]
                ? sbx_error_message(e) : sbx_strerror(rc));
        return SRV_EXIT_USAGE;
    }
    srv_conf_defaults(&s->conf);
    if (!s->conf.listen || srv_conf_load(&s->conf, s->ctx) != 0)
        return SRV_EXIT_USAGE;
    if (a->listen && srv_conf_set(&s->conf, "listen", a->listen, "--listen") != 0)
        return SRV_EXIT_USAGE;
    if (a->token_file && srv_conf_set(&s->conf, "token_file", a->token_file,
                                      "--token-file") != 0)
        return SRV_EXIT_USAGE;
    if (!(s->router = srv_router_new()) || srv_router_register(s) != 0) {
        srv_log(NULL, "out of memory");
        return SRV_EXIT_FAIL;
    }
    if (a->routes)
        return print_routes(s);
    if (srv_auth_load(s) != 0)
        return SRV_EXIT_USAGE;
    switch (srv_http_listen(s)) {
    case 0: return -1;
    case -2: return SRV_EXIT_USAGE;   /* not an address; not loopback without a token */
    default: return SRV_EXIT_FAIL;
    }
}

static int start(srv *s)
{
    if (srv_metrics_new(s) != 0 || srv_registry_new(s) != 0 || srv_idem_new(s) != 0) {
        srv_log(NULL, "out of memory");
        return SRV_EXIT_FAIL;
    }
    preload(s);
    if (srv_pool_start(s) != 0 || srv_jobs_start(s) != 0 || srv_j0_queue_start(s) != 0 ||
        srv_monitor_start(s) != 0 || srv_http_start(s) != 0)
        return SRV_EXIT_FAIL;
    srv_log(NULL, "listening on http://%s (%u workers, queue %u, %zu tokens)", s->address,
            s->conf.workers, s->conf.queue, srv_auth_count(s));
    return -1;
}

static void shutdown_server(srv *s, int sig)
{
    uint64_t deadline = srv_now_ns() + s->conf.grace_ns;

    atomic_store(&s->stopping, true);
    srv_log(NULL, "%s: no longer accepting; draining for up to %.0fs", strsignal(sig),
            (double)s->conf.grace_ns / 1e9);
    srv_http_quiesce(s);
    srv_jobs_quiesce(s);
    if (!srv_pool_drain(s, s->conf.grace_ns)) {
        srv_log(NULL, "grace time over: cancelling what is still running");
        srv_pool_cancel_all(s);
        /* A provider that cannot cancel runs to its time limit. */
        while (!srv_pool_drain(s, UINT64_C(5000000000)))
            srv_log(NULL, "waiting for the runs still under way to end");
    }
    /* The runs are over; their answers may still be on their way out.
     * Those cancelled past the grace time get a few seconds more. */
    if (!srv_http_flush(s, deadline > srv_now_ns() ? deadline
                                                   : srv_now_ns() + UINT64_C(3000000000)))
        srv_log(NULL, "grace time over: closing the connections still open");
    /* Judge0's background submissions live in memory only: those still
     * running after the grace time are cancelled.  Jobs' items still
     * running then run again at the next start. */
    srv_j0_queue_stop(s, deadline);
    srv_jobs_stop(s, deadline);
}

int main(int argc, char **argv)
{
    static srv server;
    srv *s = &server;
    struct args a = {0};
    struct sigaction sa;
    sigset_t stop;
    int rc, sig = 0;
    bool served = false;

    s->listen_fd = -1;
    s->started_ns = srv_now_ns();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigpipe;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
    /* Every thread inherits the mask: only sigwait below sees these. */
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    if ((rc = parse_args(&a, argc, argv)) >= 0)
        goto out;
    if ((rc = configure(s, &a)) >= 0 || (rc = start(s)) >= 0)
        goto stop;
    while (sigwait(&stop, &sig) != 0)
        ;
    shutdown_server(s, sig);
    rc = SRV_EXIT_OK;
    served = true;
stop:
    srv_http_stop(s);
    srv_j0_queue_stop(s, 0);
    srv_jobs_stop(s, 0);
    srv_monitor_stop(s);
    srv_pool_stop(s);
    srv_registry_free(s);
    srv_idem_free(s);
    if (served)
        srv_log(NULL, "stopped");
    sbx_ctx_free(s->ctx);
    srv_metrics_free(s);
    srv_router_free(s->router);
    srv_auth_free(s);
    srv_conf_free(&s->conf);
out:
    free(a.overrides);
    return rc;
}
