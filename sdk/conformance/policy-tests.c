/* sdk/conformance/policy-tests.c - network policy, memory limit, resource
 * reporting */
#include "config.h"

#include "kit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A listener on the host's 127.0.0.1; returns its fd and port, or -1. */
static int host_listener(conf_case *c, unsigned *port)
{
    struct sockaddr_in a = {0};
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        conf_fail(c, "socket: %s", strerror(errno));
        return -1;
    }
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        conf_fail(c, "listening on 127.0.0.1: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void t_network_none(conf_kit *k, conf_case *c)
{
    unsigned port = 0;
    char line[1024];
    sbx_create_opts *o = NULL;
    sbx_exec_opts *x = NULL;
    sbx_result *r = NULL;
    int lfd = host_listener(c, &port);
    if (lfd < 0)
        return;
    /* python3 if there is one, else bash's /dev/tcp; POSIX sh has no
     * socket client. */
    snprintf(line, sizeof line,
             "if command -v python3 >/dev/null 2>&1; then python3 -c '\n"
             "import socket\n"
             "s = socket.socket()\n"
             "s.settimeout(3)\n"
             "try:\n"
             "    s.connect((\"127.0.0.1\", %u))\n"
             "    print(\"connected\")\n"
             "except OSError as e:\n"
             "    print(\"failed:\", e)\n"
             "'; elif command -v bash >/dev/null 2>&1; then "
             "bash -c '(exec 3<>/dev/tcp/127.0.0.1/%u) 2>/dev/null "
             "&& echo connected || echo failed: bash'; "
             "else echo no-client; fi",
             port, port);
    o = conf_copts(k, c);
    x = conf_xshell(c, line);
    if (o == NULL || x == NULL ||
        !conf_set_ok(c, "sbx_create_opts_set_network(SBX_NET_NONE)",
                     sbx_create_opts_set_network(o, SBX_NET_NONE)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(20 s)",
                     sbx_exec_opts_set_timeout(x, 20 * SEC_NS)))
        goto out;
    r = conf_run(k, c, o, x);
    if (r == NULL)
        goto out;
    if (conf_stdout_is(r, "no-client\n")) {
        conf_skip(c, "neither python3 nor bash in the sandbox to connect with");
        goto out;
    }
    size_t len = 0;
    const char *out = sbx_result_stdout(r, &len);
    if (!conf_expect_status(c, "the TCP client", SBX_RUN_OK, r))
        goto out;
    if (len < 7 || memcmp(out, "failed:", 7) != 0) {
        conf_fail(c, "connect to the host's 127.0.0.1:%u under network none: "
                     "expected failure, got otherwise", port);
        conf_describe(c, r);
    } else {
        conf_note(c, "inside: %.*s", (int)(len > 0 ? len - 1 : 0), out);
    }
    /* Whatever the client said, the host's listener must have seen
     * nothing. */
    int afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (afd >= 0) {
        conf_fail(c, "the host's listener on 127.0.0.1:%u accepted a "
                     "connection from the sandbox", port);
        close(afd);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        conf_fail(c, "accept on the host's listener: %s", strerror(errno));
    }
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
    close(lfd);
}

static void t_memory_limit(conf_kit *k, conf_case *c)
{
    sbx_create_opts *o = conf_copts(k, c);
    /* b"x" * n writes every page, so the memory is really used.  First
     * 8 MiB, which fits: the limit must not hit a modest program. */
    sbx_exec_opts *small = conf_xshell(
        c, "command -v python3 >/dev/null 2>&1 || { echo no-python; exit 0; }; "
           "exec python3 -c 'b = b\"x\" * (8 << 20); print(len(b))'");
    sbx_exec_opts *x = conf_xshell(
        c, "exec python3 -c 'b = b\"x\" * (200 << 20); print(len(b))'");
    sbx_result *r = NULL;
    if (o == NULL || x == NULL || small == NULL ||
        !conf_set_ok(c, "sbx_create_opts_set_limit(SBX_LIMIT_MEMORY, 64 MiB)",
                     sbx_create_opts_set_limit(o, SBX_LIMIT_MEMORY, 64 * MIB)))
        goto out;
    r = conf_run(k, c, o, small);
    if (r == NULL)
        goto out;
    if (conf_stdout_is(r, "no-python\n")) {
        conf_skip(c, "no python3 in the sandbox to allocate with");
        goto out;
    }
    if (conf_expect_status(c, "8 MiB under a 64 MiB limit", SBX_RUN_OK, r))
        conf_expect_stdout(c, "stdout", "8388608\n", r);
    sbx_result_free(r);
    r = conf_run(k, c, o, x);
    if (r == NULL)
        goto out;
    conf_expect_status(c, "200 MiB under a 64 MiB limit", SBX_RUN_MEMORY_LIMIT,
                       r);
out:
    sbx_exec_opts_free(small);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
}

static void t_cpu_stats(conf_kit *k, conf_case *c)
{
    sbx_result *r = conf_run_shell(
        k, c, "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo $i");
    if (r == NULL)
        return;
    if (conf_expect_status(c, "a busy loop", SBX_RUN_OK, r)) {
        int64_t cpu = sbx_result_cpu_ns(r);
        int64_t mem = sbx_result_peak_memory(r);
        conf_note(c, "cpu %lld ns, peak memory %lld bytes", (long long)cpu,
                  (long long)mem);
        if (cpu <= 0)
            conf_fail(c, "cpu_ns: expected > 0, got %lld", (long long)cpu);
        if (mem <= 0)
            conf_fail(c, "peak_memory: expected > 0, got %lld", (long long)mem);
    }
    sbx_result_free(r);
}

const conf_test conf_policy_tests[] = {
    {"network_none", SBX_CAP_NETWORK_POLICY, t_network_none,
     "under network none a TCP connect to the host's 127.0.0.1 fails and "
     "the host's listener sees nothing"},
    {"memory_limit", SBX_CAP_MEMORY_LIMIT, t_memory_limit,
     "under a 64 MiB limit python3 may use 8 MiB, and touching 200 MiB ends "
     "with status memory_limit"},
    {"cpu_stats", SBX_CAP_CPU_STATS, t_cpu_stats,
     "CPU time and peak memory reported for a busy loop"},
    {NULL, 0, NULL, NULL},
};
