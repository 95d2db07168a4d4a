/* tests/kube/test-stdin-stream.c - streamed stdin (sbx_exec_opts_set_stdin_fd)
 * on the kubernetes provider, against the Kubernetes fake.  Driven by
 * stdin-stream.sh with the configuration in POLYSANDBOX_CONFIG_DIR.
 *
 *   test-stdin-stream stream N  v5: interactive lines, then 4 MiB to the
 *                               end of the pipe; a command that never reads
 *                               its stdin holds the writer back, and its
 *                               exit ends the exec while the pipe is open
 *   test-stdin-stream refused N exec_protocol = v4: the exec is refused
 *                               (SBX_E_NOTSUP, naming v5), nothing runs
 *   test-stdin-stream old N     the same when the server chooses v4
 * Prints TAP lines numbered from N + 1 (the plan is the script's). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"

#define SEC_NS 1000000000ull
#define BULK (4u << 20)
/* What a command that reads nothing may have taken from the pipe: its own
 * pipe, the sockets' buffers and the fake's, far below what an unbounded
 * reader would have swallowed meanwhile. */
#define HELD_BACK_MAX (64u << 20)
#define FLOOD_MAX (512u << 20)

static void check(const char *what, bool cond)
{
    ok(cond, "%s", what);
}

struct feeder {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char seen[256];          /* the start of stdout */
    size_t seen_len;
    bool answered;           /* "got one" came before "two" was written */
    bool stop;               /* the exec returned (flood mode) */
    size_t written;
};

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    struct feeder *f = ud;
    if (stream != SBX_STREAM_STDOUT)
        return 0;
    pthread_mutex_lock(&f->mu);
    size_t k = len < sizeof f->seen - 1 - f->seen_len ? len : sizeof f->seen - 1 - f->seen_len;
    memcpy(f->seen + f->seen_len, buf, k);
    f->seen_len += k;
    f->seen[f->seen_len] = '\0';
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

/* "one", waits (60 s at most) for the answer, "two", then BULK bytes, EOF. */
static void *feed_lines(void *arg)
{
    struct feeder *f = arg;
    static char bulk[65536];
    memset(bulk, 'x', sizeof bulk);
    bool ok = write_all(f->fd, "one\n", 4);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&f->mu);
    while (ok && !strstr(f->seen, "got one\n") &&
           pthread_cond_timedwait(&f->cv, &f->mu, &until) == 0)
        ;
    f->answered = strstr(f->seen, "got one\n") != NULL;
    pthread_mutex_unlock(&f->mu);
    ok = ok && write_all(f->fd, "two\n", 4);
    for (size_t i = 0; ok && i < BULK / sizeof bulk; i++)
        ok = write_all(f->fd, bulk, sizeof bulk);
    close(f->fd);
    return NULL;
}

/* Writes as much as the pipe takes (non-blocking) until the exec returned
 * or FLOOD_MAX; the pipe stays open meanwhile. */
static void *feed_flood(void *arg)
{
    struct feeder *f = arg;
    static char bulk[65536];
    memset(bulk, 'y', sizeof bulk);
    for (;;) {
        pthread_mutex_lock(&f->mu);
        bool stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop || f->written >= FLOOD_MAX)
            break;
        struct pollfd pf = {.fd = f->fd, .events = POLLOUT};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        ssize_t w = write(f->fd, bulk, sizeof bulk);
        if (w > 0)
            f->written += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
            break;
    }
    close(f->fd);
    return NULL;
}

static sbx_exec_opts *shell(const char *line, int fd, struct feeder *f)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    const char *argv[] = {"sh", "-c", line, NULL};
    if (x && sbx_exec_opts_set_argv(x, argv) == SBX_OK &&
        sbx_exec_opts_set_timeout(x, 120 * SEC_NS) == SBX_OK &&
        sbx_exec_opts_set_stdin_fd(x, fd) == SBX_OK &&
        sbx_exec_opts_set_output_cb(x, on_output, f) == SBX_OK)
        return x;
    sbx_exec_opts_free(x);
    return NULL;
}

static void say(const sbx_result *r)
{
    size_t len = 0;
    const char *out = sbx_result_stdout(r, &len);
    printf("# status %d, stdout '%.*s', error: %s\n", (int)sbx_result_status(r),
           (int)(len > 200 ? 200 : len), out ? out : "", sbx_result_error(r) ? sbx_result_error(r)
                                                                              : "none");
}

static void run_stream(sbx_ctx *ctx)
{
    struct feeder f = {.fd = -1};
    int p[2];
    pthread_t th;
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    if (pipe(p) || !(f.fd = p[1], true) || pthread_create(&th, NULL, feed_lines, &f)) {
        check("pipe and feeder thread", false);
        return;
    }
    sbx_exec_opts *x = shell("read a; echo \"got $a\"; read b; echo \"got $b\"; wc -c", p[0], &f);
    sbx_result *r = NULL;
    int rc = x ? sbx_run(ctx, NULL, x, &r) : SBX_E_NOMEM;
    pthread_join(th, NULL);
    char want[64];
    snprintf(want, sizeof want, "got one\ngot two\n%u\n", BULK);
    size_t len = 0;
    const char *out = r ? sbx_result_stdout(r, &len) : NULL;
    bool ok = rc == SBX_OK && r && sbx_result_status(r) == SBX_RUN_OK && len == strlen(want) &&
              !memcmp(out, want, len);
    check("v5: lines answered in order, then 4 MiB counted to the end of the pipe (CLOSE)", ok);
    if (!ok && r)
        say(r);
    check("v5: the command answered the first line before the second was written", f.answered);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    close(p[0]);

    /* A command that never reads: the writer is held back, and the
     * command's exit ends the exec though its stdin is still open. */
    struct feeder g = {.fd = -1};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    if (pipe(p) || fcntl(p[1], F_SETFL, O_NONBLOCK) || !(g.fd = p[1], true) ||
        pthread_create(&th, NULL, feed_flood, &g)) {
        check("pipe and flood thread", false);
        return;
    }
    x = shell("sleep 3; echo done", p[0], &g);
    r = NULL;
    rc = x ? sbx_run(ctx, NULL, x, &r) : SBX_E_NOMEM;
    pthread_mutex_lock(&g.mu);
    g.stop = true;
    pthread_mutex_unlock(&g.mu);
    pthread_join(th, NULL);
    out = r ? sbx_result_stdout(r, &len) : NULL;
    ok = rc == SBX_OK && r && sbx_result_status(r) == SBX_RUN_OK && len == 5 &&
         !memcmp(out, "done\n", 5);
    check("v5: a command that reads nothing ends the exec while its stdin is open", ok);
    if (!ok && r)
        say(r);
    printf("# %zu bytes went into the pipe while the command slept\n", g.written);
    check("v5: a command that reads nothing holds the writer back (< 64 MiB taken)",
          g.written < HELD_BACK_MAX);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    close(p[0]);
}

/* @why: what the message must say besides v5; @who: the checks' words. */
static void run_refused(sbx_ctx *ctx, const char *why, const char *who)
{
    struct feeder f = {.fd = -1};
    int p[2];
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    if (pipe(p)) {
        check("pipe", false);
        return;
    }
    if (write(p[1], "data\n", 5) != 5)
        check("write", false);
    sbx_exec_opts *x = shell("cat; echo ran", p[0], &f);
    sbx_result *r = NULL;
    int rc = x ? sbx_run(ctx, NULL, x, &r) : SBX_E_NOMEM;
    const char *e = r ? sbx_result_error(r) : NULL;
    bool ok = rc == SBX_OK && r && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
              sbx_result_error_code(r) == SBX_E_NOTSUP && e &&
              strstr(e, "v5.channel.k8s.io") && strstr(e, why);
    char what[160];
    snprintf(what, sizeof what, "%s: a streamed stdin is refused (not supported), naming v5 "
             "and '%s'", who, why);
    check(what, ok);
    if (!ok && r)
        say(r);
    snprintf(what, sizeof what, "%s: nothing ran", who);
    check(what, f.seen_len == 0);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    signal(SIGPIPE, SIG_IGN);
    if (argc != 3 || (strcmp(argv[1], "stream") && strcmp(argv[1], "refused") &&
                      strcmp(argv[1], "old"))) {
        fprintf(stderr, "usage: %s stream|refused|old FIRST-NUMBER\n", argv[0]);
        return 2;
    }
    tap_count = atoi(argv[2]);
    if (sbx_ctx_new(&ctx, getenv("POLYSANDBOX_CONFIG_DIR")) != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(ctx);
        printf("Bail out! no context: %s\n", e ? sbx_error_message(e) : "?");
        return 1;
    }
    if (!strcmp(argv[1], "stream"))
        run_stream(ctx);
    else if (!strcmp(argv[1], "refused"))
        run_refused(ctx, "exec_protocol = v4", "exec_protocol = v4");
    else
        run_refused(ctx, "the API server chose v4.channel.k8s.io", "a server without v5");
    sbx_ctx_free(ctx);
    return tap_status();
}
