/* plugins/microvm/mv-xrun.c - a running command's traffic with the agent
 *
 * From the EXEC sent to its EXIT the host polls, beside the channel, the
 * exec's cancel_fd, stdin_fd (only while the agent asked for a chunk:
 * a slow reader holds the writer back) and signal_fd.  What it sends
 * then (STDIN, SIGNAL, KILL) waits in a queue written as the channel
 * takes it, never blocking: the agent may itself be blocked writing
 * output, which the host must keep reading.  The queue is bounded: one
 * chunk of stdin per WANT, signals only while little waits.
 *
 * Every guest frame is hostile: a WANT out of turn (the exec's stdin is
 * not streamed, one is unanswered, its end was sent), a frame of a type
 * that has no place in an exec, a malformed EXIT each end the sandbox
 * (s->broken stays set).  A cancel sends KILL and waits a short while
 * for the EXIT that keeps the channel in step; one that comes while a
 * frame is being read (the usual case while the command prints) lets
 * that frame end first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mv-int.h"

/* How long a cancelled exec waits for the agent's EXIT. */
#define MV_CANCEL_WAIT_MS 5000
/* signal_fd is read only while less than this waits to be sent. */
#define MV_SIG_BACKLOG 4096

struct xrun {
    struct mv_prov *p;
    struct mv_sandbox *s;
    const sbx_exec_spec_v1 *spec;
    uint8_t *q; /* frames waiting to be sent */
    size_t qlen, qoff, qcap;
    int killed;   /* a KILL queued */
    int asked;    /* a WANT unanswered */
    int in_open;  /* stdin_fd is streamed and its end not sent */
    int sig_open; /* signal_fd not at its end */
};

/* Queues one frame.  0, or an error set. */
static int push(struct xrun *x, uint8_t type, const void *data, size_t len)
{
    size_t need = x->qlen - x->qoff + MV_HDR_LEN + len;

    if (x->qoff) {
        memmove(x->q, x->q + x->qoff, x->qlen - x->qoff);
        x->qlen -= x->qoff;
        x->qoff = 0;
    }
    if (need > x->qcap) {
        uint8_t *n = realloc(x->q, need);
        if (!n)
            return x->p->host->set_error(x->p->h, SBX_E_NOMEM, "out of memory");
        x->q = n;
        x->qcap = need;
    }
    mv_hdr_put(x->q + x->qlen, type, (uint32_t)len);
    if (len)
        memcpy(x->q + x->qlen + MV_HDR_LEN, data, len);
    x->qlen += MV_HDR_LEN + len;
    return SBX_OK;
}

/* Sends what the channel takes now of the queue; with @wait_until, all
 * of it by then (the command ended: the agent reads again).  0, or an
 * error set. */
static int flush(struct xrun *x, int64_t wait_until)
{
    while (x->qoff < x->qlen) {
        ssize_t n =
            send(x->s->chan, x->q + x->qoff, x->qlen - x->qoff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int64_t left = wait_until - mv_now_ms();
            struct pollfd pf = {x->s->chan, POLLOUT, 0};
            if (!wait_until)
                return SBX_OK;
            if (left <= 0)
                return x->p->host->set_error(x->p->h, SBX_E_TIMEOUT,
                                             "microvm: the agent took no more input in time");
            (void)poll(&pf, 1, left > 1000 ? 1000 : (int)left);
            continue;
        }
        if (n <= 0)
            return x->p->host->set_error(x->p->h, SBX_E_BACKEND,
                                         "microvm: writing to the agent: %s",
                                         n < 0 ? strerror(errno) : "closed");
        x->qoff += (size_t)n;
    }
    return SBX_OK;
}

/* stdin_fd is readable: its next chunk as the WANT's answer, or its end
 * (an empty STDIN). */
static int read_stdin(struct xrun *x)
{
    uint8_t *buf = malloc(MV_CHUNK);
    ssize_t n;
    int rc;

    if (!buf)
        return x->p->host->set_error(x->p->h, SBX_E_NOMEM, "out of memory");
    while ((n = read(x->spec->stdin_fd, buf, MV_CHUNK)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN) {
        free(buf);
        return SBX_OK;
    }
    x->asked = 0;
    if (n <= 0)
        x->in_open = 0;
    rc = push(x, MV_T_STDIN, buf, n > 0 ? (size_t)n : 0);
    free(buf);
    return rc;
}

/* signal_fd is readable: a SIGNAL for each deliverable byte, the others
 * dropped (the agent checks again: it trusts no frame either). */
static int read_signals(struct xrun *x)
{
    uint8_t buf[64];
    ssize_t n;
    int rc = SBX_OK;

    while ((n = read(x->spec->signal_fd, buf, sizeof buf)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return SBX_OK;
    if (n <= 0)
        x->sig_open = 0;
    for (ssize_t i = 0; i < n && !rc; i++)
        if (sbx_signal_deliverable(buf[i]))
            rc = push(x, MV_T_SIGNAL, &buf[i], 1);
    return rc;
}

/* Queues one KILL: the agent kills the command's cgroup and answers
 * EXIT. */
static int kill_once(struct xrun *x)
{
    int rc = SBX_OK;

    if (!x->killed && !(rc = push(x, MV_T_KILL, NULL, 0)))
        x->killed = 1;
    return rc;
}

/* The exec was cancelled: its EXIT is waited for until @until. */
static int cancelled(struct xrun *x, int64_t until, int64_t *cancel_until)
{
    *cancel_until = until;
    return kill_once(x);
}

static int broke(struct xrun *x, const char *why)
{
    return x->p->host->set_error(x->p->h, SBX_E_BACKEND,
                                 "microvm: the guest agent broke the protocol: %s", why);
}

/* A readable descriptor's revents, 0 for an unused slot. */
static short ready(const struct pollfd *pf, int i)
{
    return i >= 0 ? pf[i].revents : 0;
}

int mv_xrun_wait(struct mv_prov *p, struct mv_sandbox *s, const sbx_exec_spec_v1 *spec,
                 const sbx_output_sink_v1 *sink, int64_t deadline, struct mv_exit *ex, int *over)
{
    struct xrun x = {.p = p,
                     .s = s,
                     .spec = spec,
                     .in_open = spec->stdin_fd >= 0,
                     .sig_open = spec->signal_fd >= 0};
    int rc = SBX_OK;
    int64_t cancel_until = 0; /* once cancelled: how long the EXIT may take */

    *over = 0;
    while (!rc) {
        struct pollfd pf[4];
        int n = 0, i_cancel = -1, i_in = -1, i_sig = -1;
        int64_t until = cancel_until ? cancel_until : deadline;

        pf[n++] = (struct pollfd){s->chan, (short)(POLLIN | (x.qoff < x.qlen ? POLLOUT : 0)), 0};
        if (spec->cancel_fd >= 0 && !cancel_until)
            pf[i_cancel = n++] = (struct pollfd){spec->cancel_fd, POLLIN, 0};
        if (x.asked && x.in_open && !x.killed)
            pf[i_in = n++] = (struct pollfd){spec->stdin_fd, POLLIN, 0};
        if (x.sig_open && !x.killed && x.qlen - x.qoff < MV_SIG_BACKLOG)
            pf[i_sig = n++] = (struct pollfd){spec->signal_fd, POLLIN, 0};
        int64_t left = until - mv_now_ms();
        if (left <= 0) {
            rc = p->host->set_error(p->h, SBX_E_TIMEOUT,
                                    "microvm: the agent did not answer in time");
            break;
        }
        int r = poll(pf, (nfds_t)n, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR) {
            rc = p->host->set_error(p->h, SBX_E_IO, "microvm: poll: %s", strerror(errno));
            break;
        }
        if (r <= 0)
            continue;
        if (ready(pf, i_cancel))
            rc = cancelled(&x, mv_now_ms() + MV_CANCEL_WAIT_MS, &cancel_until);
        if (!rc && ready(pf, i_in))
            rc = read_stdin(&x);
        if (!rc && ready(pf, i_sig))
            rc = read_signals(&x);
        if (!rc && (pf[0].revents & POLLOUT))
            rc = flush(&x, 0);
        if (rc || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;

        struct mv_hdr hd;
        uint8_t *pl;
        const char *why;
        /* (a guest stalling inside a frame holds a cancel back no longer
         * than a stall between frames) */
        struct mv_stop stop = {cancel_until ? -1 : spec->cancel_fd, MV_CANCEL_WAIT_MS, 0};
        rc = mv_chan_recv_stop(p, s->chan, until, &stop, &hd, &pl);
        if (stop.until) {
            int crc = cancelled(&x, stop.until, &cancel_until);
            rc = rc ? rc : crc;
        }
        if (rc) {
            free(pl); /* (NULL when the frame failed) */
            break;
        }
        if (hd.type == MV_T_STDOUT || hd.type == MV_T_STDERR) {
            int err = hd.type == MV_T_STDERR;
            /* The core's sink holds the output caps: past one (or when
             * the caller stopped) it says stop. */
            if (!*over && !cancel_until && hd.len &&
                sink->write(sink->ud, err ? SBX_STREAM_STDERR : SBX_STREAM_STDOUT, pl, hd.len))
                *over = 1;
            if (*over)
                rc = kill_once(&x);
        } else if (hd.type == MV_T_WANT) {
            if (spec->stdin_fd < 0 || x.asked || !x.in_open)
                rc = broke(&x, "stdin asked for out of turn");
            x.asked = 1;
        } else if (hd.type == MV_T_ERROR) {
            /* The agent refused the EXEC and sends no EXIT: back in step. */
            s->broken = 0;
            rc = mv_chan_error(p, "exec", pl, hd.len);
        } else if (hd.type != MV_T_EXIT) {
            rc = broke(&x, "a frame out of place during an exec");
        } else if (mv_exit_decode(pl, hd.len, ex, &why)) {
            rc = broke(&x, why);
        } else {
            /* In step once what was queued went out whole (the agent
             * drops what comes between commands). */
            if (!(rc = flush(&x, cancel_until ? cancel_until : until)))
                s->broken = 0;
            free(pl);
            break;
        }
        free(pl);
    }
    free(x.q);
    /* Cancelled: that is the exec's fate, whatever came after (a VM
     * whose agent did not answer stays broken). */
    if (cancel_until || rc == SBX_E_CANCELLED)
        return p->host->set_error(p->h, SBX_E_CANCELLED, "microvm: the exec was cancelled");
    return rc;
}
