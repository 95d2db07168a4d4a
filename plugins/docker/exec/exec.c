/* plugins/docker/exec/exec.c - one exec: which mode runs it, and the
 * bookkeeping both modes share
 *
 * The command runs under the helper (init/init.c), which enforces the
 * wall timeout, kills every process the exec started when it ends, and
 * reports the real wait status.  Both modes (api.c, attach.c) poll the
 * exec's connection together with the spec's cancel, stdin and signal
 * descriptors, pass stdin and signals on as control frames, deliver the
 * output to the core's sink (which holds the caps), and turn the helper's
 * report into the outcome: that is here.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "exec/xrun.h"

/* signal_fd is read only while less than this waits to be sent. */
#define SIG_BACKLOG 4096

void dk_xrun_control(struct dk_xrun *r,
                     int (*push)(struct dk_xrun *, char, const void *, size_t))
{
    r->push = push;
    r->in_open = r->spec->stdin_fd >= 0;
    r->sig_open = r->spec->signal_fd >= 0;
}

/* stdin_fd is readable: one chunk to the helper, or its end. */
static void read_stdin(struct dk_xrun *r)
{
    unsigned char buf[65536];
    ssize_t n;

    while ((n = read(r->spec->stdin_fd, buf, sizeof buf)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0)
        r->in_open = false;
    if (r->push(r, n > 0 ? 'D' : 'E', buf, n > 0 ? (size_t)n : 0) != SBX_OK)
        r->in_open = false;   /* out of memory: nothing more is read */
}

/* signal_fd is readable: its signals to the helper, which sends them to
 * the command's process group.  Bytes that are no such signal are
 * dropped here (and again by the helper: it trusts no frame). */
static void read_signals(struct dk_xrun *r)
{
    unsigned char buf[64];
    size_t k = 0;
    ssize_t n;

    while ((n = read(r->spec->signal_fd, buf, sizeof buf)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        r->sig_open = false;
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (sbx_signal_deliverable(buf[i]))
            buf[k++] = buf[i];
    if (k && r->push(r, 'S', buf, k) != SBX_OK)
        r->sig_open = false;  /* out of memory: nothing more is read */
}

int dk_xrun_poll(struct dk_xrun *r, int fd, short events, int timeout_ms, short *revents)
{
    struct pollfd pf[4] = {{.fd = fd, .events = events}};
    nfds_t n = 1;
    int i_cancel = -1, i_in = -1, i_sig = -1, pr;

    if (r->spec->cancel_fd >= 0 && r->kill == WK_NONE)
        pf[i_cancel = (int)n++] = (struct pollfd){.fd = r->spec->cancel_fd, .events = POLLIN};
    /* More stdin only once the last of it went out (a slow reader holds
     * the writer back). */
    if (r->in_open && r->kill == WK_NONE && r->snd_off == r->snd_len)
        pf[i_in = (int)n++] = (struct pollfd){.fd = r->spec->stdin_fd, .events = POLLIN};
    /* Signals while little waits to go out (a flood of them must not
     * grow the send buffer without end). */
    if (r->sig_open && r->kill == WK_NONE && r->snd_len - r->snd_off < SIG_BACKLOG)
        pf[i_sig = (int)n++] = (struct pollfd){.fd = r->spec->signal_fd, .events = POLLIN};
    pr = poll(pf, n, timeout_ms);
    *revents = 0;
    if (pr <= 0)
        return pr;
    if (i_cancel >= 0 && pf[i_cancel].revents) {
        /* The helper kills the command and reports; the loop then ends. */
        r->kill = WK_CANCEL;
        r->stop = true;
    }
    if (i_in >= 0 && pf[i_in].revents)
        read_stdin(r);
    if (i_sig >= 0 && pf[i_sig].revents)
        read_signals(r);
    *revents = pf[0].revents;
    return pf[0].revents ? 1 : 0;
}

int dk_xrun_cancelled(struct dk_xrun *r, const char *id)
{
    if (r->kill != WK_CANCEL)
        return 0;
    return dk_err(r->e, SBX_E_CANCELLED, "the exec in %s was cancelled", id);
}

bool dk_xrun_send(struct dk_xrun *r, CURL *h)
{
    size_t sent = 0;
    CURLcode cc = curl_easy_send(h, r->snd + r->snd_off, r->snd_len - r->snd_off, &sent);
    if (cc == CURLE_OK)
        r->snd_off += sent;
    return cc == CURLE_OK || cc == CURLE_AGAIN;
}

int dk_xrun_output(void *ud, int stream, const void *buf, size_t n)
{
    struct dk_xrun *r = ud;
    if (r->stop || n == 0)
        return 0;
    /* The core's sink holds the output caps: past one it says stop. */
    if (r->sink && r->sink->write && r->sink->write(r->sink->ud, stream, buf, n) != 0) {
        r->stop = true;
        r->kill = WK_OUTPUT;
    }
    return 0;
}

static int add_arg(json_t *cmd, const char *s)
{
    return json_array_append_new(cmd, json_string(s));
}

/* The exec's Cmd: the helper, its options, "--", the command. */
json_t *dk_build_cmd(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                     int *err_code)
{
    json_t *cmd = json_array();
    char num[32], *dir = NULL;
    int bad = !cmd;
    const char *cwd = spec->cwd;
    if (!cwd || !*cwd)
        dir = strdup(DK_WORKDIR);
    else if (cwd[0] == '/')
        dir = strdup(cwd);
    else if ((dir = malloc(strlen(DK_WORKDIR) + strlen(cwd) + 2)))
        sprintf(dir, DK_WORKDIR "/%s", cwd);
    bad = bad || !dir || add_arg(cmd, DK_INIT_PATH);
    uint64_t tmo_ms = (spec->timeout_ns + 999999u) / 1000000u;
    snprintf(num, sizeof num, "%" PRIu64, tmo_ms ? tmo_ms : 1);
    bad = bad || add_arg(cmd, "-t") || add_arg(cmd, num);
    if (sb->limits.cpu_ns) {
        snprintf(num, sizeof num, "%" PRIu64, (sb->limits.cpu_ns + 999999999u) / 1000000000u);
        bad = bad || add_arg(cmd, "-c") || add_arg(cmd, num);
    }
    if (sb->limits.fsize_bytes) {
        snprintf(num, sizeof num, "%" PRIu64, sb->limits.fsize_bytes);
        bad = bad || add_arg(cmd, "-f") || add_arg(cmd, num);
    }
    if (sb->limits.nofile) {
        snprintf(num, sizeof num, "%" PRIu64, sb->limits.nofile);
        bad = bad || add_arg(cmd, "-n") || add_arg(cmd, num);
    }
    bad = bad || add_arg(cmd, "-d") || add_arg(cmd, dir);
    if (spec->stdin_len || spec->stdin_fd >= 0)
        bad = bad || add_arg(cmd, "-s");
    bad = bad || add_arg(cmd, "--");
    for (size_t i = 0; !bad && spec->argv[i]; i++)
        bad = add_arg(cmd, spec->argv[i]);
    free(dir);
    if (bad) {
        json_decref(cmd);
        *err_code = dk_err(e, SBX_E_NOMEM, "out of memory building the command");
        return NULL;
    }
    return cmd;
}

int dk_xrun_report(struct dk_xrun *r, struct dk_sb *sb, const struct dk_report *rep)
{
    sbx_exec_outcome_v1 *o = r->out;
    struct dk_engine *e = r->e;
    o->cpu_ns = rep->cpu_ns;
    o->peak_memory_bytes = rep->rss > 0 ? rep->rss : -1;
    o->exit_code = -1;
    o->signal = 0;
    bool cpu_over = sb->limits.cpu_ns && rep->cpu_ns >= 0 &&
                    (uint64_t)rep->cpu_ns > sb->limits.cpu_ns;
    const char *s = rep->status;
    if (r->kill == WK_OUTPUT) {
        o->status = SBX_RUN_OUTPUT_LIMIT;
    } else if (!strcmp(s, "t") || (!strcmp(s, "k") && r->kill == WK_BACKSTOP)) {
        o->status = SBX_RUN_TIMEOUT;
    } else if (!strcmp(s, "k")) {
        o->status = SBX_RUN_OUTPUT_LIMIT;
    } else if (!strcmp(s, "x")) {
        o->exit_code = rep->value;
        o->status = rep->value == 0 ? (cpu_over ? SBX_RUN_CPU_LIMIT : SBX_RUN_OK)
                  : cpu_over      ? SBX_RUN_CPU_LIMIT
                  : rep->pids_hit ? SBX_RUN_PIDS_LIMIT
                                  : SBX_RUN_NONZERO_EXIT;
    } else if (!strcmp(s, "s")) {
        o->signal = rep->value;
        /* SIGSYS: the seccomp profile's or the command's filter killed it. */
        o->status = rep->value == SIGSYS                ? SBX_RUN_SECCOMP
                  : rep->value == SIGXCPU || cpu_over ? SBX_RUN_CPU_LIMIT
                  : rep->pids_hit                     ? SBX_RUN_PIDS_LIMIT
                                                      : SBX_RUN_SIGNAL;
    } else if (!strcmp(s, "m")) {
        o->signal = rep->value;
        o->status = SBX_RUN_MEMORY_LIMIT;
    } else if (!strcmp(s, "nf")) {
        o->exit_code = 127;
        o->status = SBX_RUN_NOT_FOUND;
    } else if (!strcmp(s, "nx")) {
        o->exit_code = 126;
        o->status = SBX_RUN_NOT_EXECUTABLE;
    } else if (!strcmp(s, "cd")) {
        /* a --cwd that is not there is the caller's mistake */
        return dk_err(e, rep->value == ENOENT || rep->value == ENOTDIR ? SBX_E_INVAL : SBX_E_IO,
                      "working directory '%s' in %s: %s", r->spec->cwd ? r->spec->cwd : DK_WORKDIR,
                      sb->id, strerror(rep->value));
    } else {
        return dk_err(e, SBX_E_IO, "sandbox setup failed in %s: %s", sb->id,
                      strerror(rep->value));
    }
    return SBX_OK;
}

int dk_env_check(struct dk_engine *e, const sbx_exec_spec_v1 *spec)
{
    for (size_t i = 0; i < spec->n_env; i++) {
        const sbx_kv_v1 *kv = &spec->env[i];
        if (!kv->key || !*kv->key || strchr(kv->key, '=') || !kv->value)
            return dk_err(e, SBX_E_INVAL, "exec environment entry %zu: bad name '%s'", i,
                          kv->key ? kv->key : "(null)");
    }
    return SBX_OK;
}

int dk_exec(struct dk_engine *e, bool attach, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    unsigned char rnd[16];
    char nonce[40];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return dk_err(e, SBX_E_IO, "getrandom: %s", strerror(errno));
    for (size_t i = 0; i < sizeof rnd; i++)
        sprintf(nonce + 2 * i, "%02x", rnd[i]);
    if (sb->serve && attach) {
        int r = dk_serve_exec(e, sb, spec, sink, out);
        if (r != DK_USE_API)
            return r;
    }
    return dk_api_exec(e, sb, spec, sink, out, nonce);
}
