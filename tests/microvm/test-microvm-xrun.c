/* tests/microvm/test-microvm-xrun.c - the host's end of a running exec
 * (plugins/microvm/mv-xrun.c, mv-chan.c) against a scripted agent
 *
 * No VM: the channel is a socketpair whose other end plays a hostile
 * agent, its frames written before the host reads them.  Streamed stdin
 * goes one STDIN per WANT and ends with an empty one; signals are
 * filtered to the deliverable ones; a cancel sends KILL and answers
 * SBX_E_CANCELLED, also when it comes mid-frame while the command
 * prints (an agent in a child process), and the channel stays in step;
 * once the agent stops asking for stdin (the command closed it) the host
 * reads no more of it; a sink that says stop gets the command killed.  And
 * every frame out of turn is refused by name: a WANT when stdin is not
 * streamed or after its end, a frame of no known type, a DONE inside an
 * exec, an output frame over its length, a frame after the EXIT.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <polysandbox/provider-test.h>

#include "mv-int.h"
#include "tap.h"

static const sbx_provider_v1 desc = {
    .magic = SBX_PROVIDER_MAGIC,
    .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR,
    .name = "microvm",
};

static sbx_test_host *th;
static struct mv_prov prov;

struct out {
    char text[256];
    size_t len;
    int stop; /* the sink says stop (a cap reached) */
};

static int sink_write(void *ud, int stream, const void *buf, size_t len)
{
    struct out *o = ud;

    if (len < sizeof o->text - o->len) {
        memcpy(o->text + o->len, buf, len);
        o->len += len;
    }
    return o->stop;
}

/* Writes a frame as the agent (any version byte and type). */
static void agent_raw(int fd, uint8_t ver, uint8_t type, const void *p, size_t len)
{
    uint8_t h[MV_HDR_LEN] = {MV_MAGIC, ver, type, 0};

    mv_put32(h + 4, (uint32_t)len);
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h || (len && write(fd, p, len) != (ssize_t)len))
        diag("writing the agent's frame failed");
}

static void agent(int fd, uint8_t type, const void *p, size_t len)
{
    agent_raw(fd, MV_PROTO_VERSION, type, p, len);
}

static void agent_exit(int fd, int code)
{
    struct mv_exit e = {code, 0, 0, -1, -1};
    uint8_t b[MV_EXIT_LEN];

    mv_exit_encode(b, &e);
    agent(fd, MV_T_EXIT, b, sizeof b);
}

/* What the host sent the agent: "TYPE:payload;" each, into @buf. */
static const char *sent(int fd, char *buf, size_t n)
{
    uint8_t h[MV_HDR_LEN], p[256];
    size_t off = 0;

    buf[0] = '\0';
    while (recv(fd, h, sizeof h, MSG_DONTWAIT) == (ssize_t)sizeof h) {
        uint32_t len = mv_get32(h + 4);
        if (len > sizeof p || (len && recv(fd, p, len, MSG_DONTWAIT) != (ssize_t)len))
            break;
        off += (size_t)snprintf(buf + off, n - off, "%u:", h[2]);
        for (uint32_t i = 0; i < len && off + 4 < n; i++)
            off += (size_t)snprintf(buf + off, n - off, h[2] == MV_T_SIGNAL ? "%u" : "%c", p[i]);
        off += (size_t)snprintf(buf + off, n - off, ";");
    }
    return buf;
}

struct run {
    int sv[2]; /* [0] the host's, [1] the agent's */
    sbx_exec_spec_v1 spec;
    struct mv_sandbox s;
    struct out out;
    struct mv_exit ex;
    int over;
};

static void run_init(struct run *r)
{
    memset(r, 0, sizeof *r);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sv))
        r->sv[0] = r->sv[1] = -1;
    r->spec.cancel_fd = r->spec.stdin_fd = r->spec.signal_fd = -1;
    r->s.chan = r->sv[0];
    r->s.broken = 1;
    sbx_test_host_clear(th);
}

static int run_wait(struct run *r)
{
    sbx_output_sink_v1 sink = {sink_write, &r->out};

    return mv_xrun_wait(&prov, &r->s, &r->spec, &sink, mv_now_ms() + 20000, &r->ex, &r->over);
}

/* The error the host was told, containing @what. */
static int error_is(int rc, int code, const char *what)
{
    const char *msg = NULL;

    sbx_test_host_error(th, &msg);
    if (rc != code || !msg || !strstr(msg, what)) {
        diag("rc %d, error \"%s\"", rc, msg ? msg : "(none)");
        return 0;
    }
    return 1;
}

static void run_fini(struct run *r)
{
    close(r->sv[0]);
    close(r->sv[1]);
}

/* A pipe holding @text, its write end closed when @eof. */
static int pipe_of(const void *text, size_t len, int eof, int *wr)
{
    int p[2];

    if (pipe(p))
        return -1;
    if (len && write(p[1], text, len) != (ssize_t)len)
        diag("pipe write failed");
    if (eof)
        close(p[1]);
    else
        *wr = p[1];
    return p[0];
}

static void t_stdin(void)
{
    struct run r;
    char buf[512];
    int rc;

    run_init(&r);
    r.spec.stdin_fd = pipe_of("hello", 5, 1, NULL);
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent(r.sv[1], MV_T_STDOUT, "hi", 2);
    agent_exit(r.sv[1], 3);
    rc = run_wait(&r);
    ok(rc == SBX_OK && r.ex.exit_code == 3 && !r.s.broken && r.out.len == 2,
       "a streamed stdin's exec ends at its EXIT, back in step");
    ok(!strcmp(sent(r.sv[1], buf, sizeof buf), "14:hello;14:;"),
       "one STDIN per WANT, then an empty one at the end (%s)", buf);
    close(r.spec.stdin_fd);
    run_fini(&r);

    /* a WANT after the end was sent */
    run_init(&r);
    r.spec.stdin_fd = pipe_of(NULL, 0, 1, NULL);
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent_exit(r.sv[1], 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "stdin asked for out of turn") && r.s.broken,
       "a WANT after stdin's end breaks the protocol, the VM left broken");
    close(r.spec.stdin_fd);
    run_fini(&r);

    /* a WANT when stdin is not streamed */
    run_init(&r);
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent_exit(r.sv[1], 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "stdin asked for out of turn"),
       "a WANT when stdin is not streamed breaks the protocol");
    run_fini(&r);
}

/* The command closed its stdin: the agent asks no more, and the host
 * reads no more of it than it was asked for. */
static void t_stdin_closed(void)
{
    static uint8_t big[MV_CHUNK + 100];
    char path[] = "/tmp/test-microvm-xrun.XXXXXX";
    struct run r;
    int rc;

    run_init(&r);
    r.spec.stdin_fd = mkstemp(path);
    if (r.spec.stdin_fd >= 0) {
        unlink(path);
        if (write(r.spec.stdin_fd, big, sizeof big) != (ssize_t)sizeof big ||
            lseek(r.spec.stdin_fd, 0, SEEK_SET) != 0)
            diag("writing stdin's file failed");
    }
    agent(r.sv[1], MV_T_WANT, NULL, 0);
    agent(r.sv[1], MV_T_STDOUT, "hi", 2);
    agent_exit(r.sv[1], 0);
    rc = run_wait(&r);
    off_t at = lseek(r.spec.stdin_fd, 0, SEEK_CUR);
    ok(rc == SBX_OK && !r.s.broken && at == (off_t)MV_CHUNK,
       "no WANT after the first: one chunk of stdin read, the exec ends in step (%lld read)",
       (long long)at);
    close(r.spec.stdin_fd);
    run_fini(&r);
}

static void t_signals(void)
{
    const uint8_t sigs[] = {SIGUSR1, SIGKILL, 200, 0, SIGSTOP, SIGTERM};
    struct run r;
    char buf[512];
    int wr = -1;

    run_init(&r);
    r.spec.signal_fd = pipe_of(sigs, sizeof sigs, 0, &wr);
    agent_exit(r.sv[1], 0);
    int rc = run_wait(&r);
    snprintf(buf, sizeof buf, "15:%d;15:%d;", SIGUSR1, SIGTERM);
    char got[512];
    ok(rc == SBX_OK && !strcmp(sent(r.sv[1], got, sizeof got), buf),
       "signals: only the deliverable ones sent, in order (%s)", got);
    close(wr);
    close(r.spec.signal_fd);
    run_fini(&r);
}

static void t_cancel_and_caps(void)
{
    struct run r;
    char buf[512];
    int rc, wr = -1;

    run_init(&r);
    r.spec.cancel_fd = pipe_of("x", 1, 0, &wr);
    agent(r.sv[1], MV_T_STDOUT, "late", 4);
    agent_exit(r.sv[1], 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_CANCELLED, "cancelled") && !strcmp(sent(r.sv[1], buf, sizeof buf), "4:;"),
       "a cancel sends KILL and the exec is cancelled (%s)", buf);
    ok(!r.s.broken && r.out.len == 0,
       "its EXIT keeps the channel in step, nothing delivered after the cancel");
    close(wr);
    close(r.spec.cancel_fd);
    run_fini(&r);

    run_init(&r);
    r.out.stop = 1;
    agent(r.sv[1], MV_T_STDOUT, "a", 1);
    agent(r.sv[1], MV_T_STDOUT, "b", 1);
    agent_exit(r.sv[1], 0);
    rc = run_wait(&r);
    ok(rc == SBX_OK && r.over && r.out.len == 1 && !strcmp(sent(r.sv[1], buf, sizeof buf), "4:;"),
       "a sink that says stop: one KILL, nothing more delivered (%s)", buf);
    run_fini(&r);
}

/* The agent in a child process: where the cancel fires. */
enum { AT_HEAD, AT_HALF, AT_STREAM };

/* Writes one output frame, in two writes (header, payload). */
static int frame_out(int fd, const char *text, size_t len)
{
    uint8_t h[MV_HDR_LEN] = {MV_MAGIC, MV_PROTO_VERSION, MV_T_STDOUT, 0};

    mv_put32(h + 4, (uint32_t)len);
    return send(fd, h, sizeof h, MSG_NOSIGNAL) == (ssize_t)sizeof h &&
                   send(fd, text, len, MSG_NOSIGNAL) == (ssize_t)len
               ? 0
               : -1;
}

/* Until the host read all that was sent (it then waits mid-frame). */
static void drained(int host_fd)
{
    int q = 1;

    for (int i = 0; i < 10000 && !ioctl(host_fd, FIONREAD, &q) && q > 0; i++)
        usleep(1000);
}

/* Prints "o" three times, fires the cancel (@at: once the host read a
 * frame's header, or half its payload; or with frames waiting), prints
 * "x" until the KILL comes, answers EXIT.  Exits 0 when a KILL came. */
static void agent_printing(int fd, int host_fd, int cancel_wr, int at)
{
    uint8_t h[MV_HDR_LEN];

    for (int i = 0; i < 3; i++)
        if (frame_out(fd, "o", 1))
            _exit(2);
    if (at != AT_STREAM) {
        uint8_t fh[MV_HDR_LEN] = {MV_MAGIC, MV_PROTO_VERSION, MV_T_STDOUT, 0};
        mv_put32(fh + 4, 4);
        if (write(fd, fh, sizeof fh) != (ssize_t)sizeof fh ||
            (at == AT_HALF && write(fd, "oo", 2) != 2))
            _exit(2);
        drained(host_fd);
    }
    close(host_fd); /* the host's end closed: this one writes no more */
    if (write(cancel_wr, "c", 1) != 1)
        _exit(2);
    if (at != AT_STREAM && write(fd, at == AT_HALF ? "oo" : "oooo", at == AT_HALF ? 2 : 4) < 0)
        _exit(2);
    for (int i = 0; i < 100000; i++) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 0) == 1) {
            if (recv(fd, h, sizeof h, 0) != (ssize_t)sizeof h || h[2] != MV_T_KILL)
                _exit(3);
            agent_exit(fd, 0);
            _exit(0);
        }
        if (frame_out(fd, "x", 1))
            _exit(1);
    }
    _exit(1);
}

static void t_cancel_printing(void)
{
    static const char *const what[] = {"after a frame's header", "with half a frame's payload read",
                                       "between frames"};

    for (int at = AT_HEAD; at <= AT_STREAM; at++) {
        struct run r;
        int wr = -1, st = -1;

        run_init(&r);
        r.spec.cancel_fd = pipe_of(NULL, 0, 0, &wr);
        pid_t pid = fork();
        if (pid == 0)
            agent_printing(r.sv[1], r.sv[0], wr, at);
        int rc = run_wait(&r);
        close(r.sv[0]);
        r.sv[0] = -1;
        if (pid > 0)
            waitpid(pid, &st, 0);
        r.out.text[r.out.len] = '\0';
        ok(error_is(rc, SBX_E_CANCELLED, "cancelled") && WIFEXITED(st) && !WEXITSTATUS(st) &&
               !r.s.broken && !strchr(r.out.text, 'x') &&
               (at == AT_STREAM || !strcmp(r.out.text, "ooo")),
           "a cancel %s while it prints: KILL sent, its EXIT read, in step, nothing after it "
           "delivered (agent %d, \"%s\")",
           what[at], WIFEXITED(st) ? WEXITSTATUS(st) : -1, r.out.text);
        close(wr);
        close(r.spec.cancel_fd);
        run_fini(&r);
    }
}

static void t_hostile(void)
{
    static uint8_t big[MV_CHUNK + 1];
    struct run r;
    int rc;

    run_init(&r);
    agent_raw(r.sv[1], MV_PROTO_VERSION, 99, NULL, 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "unknown frame type") && r.s.broken,
       "a frame of no known type breaks the protocol");
    run_fini(&r);

    run_init(&r);
    agent(r.sv[1], MV_T_DONE, NULL, 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "a frame out of place"),
       "a DONE inside an exec is out of place");
    run_fini(&r);

    run_init(&r);
    agent(r.sv[1], MV_T_STDOUT, big, sizeof big);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "longer than allowed"),
       "an output frame over 64 KiB is refused");
    run_fini(&r);

    run_init(&r);
    agent_raw(r.sv[1], MV_PROTO_VERSION - 1, MV_T_EXIT, NULL, 0);
    rc = run_wait(&r);
    ok(error_is(rc, SBX_E_BACKEND, "speaks protocol version"),
       "a frame of an older version is refused, naming the versions");
    run_fini(&r);

    run_init(&r);
    agent_exit(r.sv[1], 0);
    agent(r.sv[1], MV_T_STDOUT, "x", 1);
    rc = run_wait(&r);
    ok(rc == SBX_OK && mv_chan_quiet(&prov, r.s.chan) == SBX_E_BACKEND &&
           error_is(SBX_E_BACKEND, SBX_E_BACKEND, "nothing asked for"),
       "a frame after the EXIT: refused before the next request");
    run_fini(&r);

    run_init(&r);
    ok(mv_chan_quiet(&prov, r.s.chan) == SBX_OK, "a quiet channel is quiet");
    close(r.sv[1]);
    r.sv[1] = -1;
    ok(error_is(mv_chan_quiet(&prov, r.s.chan), SBX_E_BACKEND, "closed"),
       "a closed one is the VM gone");
    close(r.sv[0]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    tap_plan(19);
    if (!(th = sbx_test_host_new(&desc)))
        return 99;
    prov.host = sbx_test_host_table(th);
    prov.h = sbx_test_host_handle(th);
    t_stdin();
    t_stdin_closed();
    t_signals();
    t_cancel_and_caps();
    t_cancel_printing();
    t_hostile();
    sbx_test_host_free(th);
    return tap_done();
}
