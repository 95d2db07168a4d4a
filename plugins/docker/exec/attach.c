/* plugins/docker/exec/attach.c - execs through the attach connection
 *
 * In attach mode (exec_mode = attach, the default) a sandbox's PID 1 is
 * the helper's exec server (init/serve.c).  The provider attaches
 * once to the container's stdin and stdout (POST /containers/ID/attach,
 * hijacked like an exec start) and keeps the connection in the sandbox
 * handle; an exec is then one request frame (init/proto.h) and the
 * frames that come back with its id, instead of an exec create and start
 * (a new runc process and shim task each).
 *
 * Docker hands the container's stdin to every attached client at once,
 * and two clients' bytes could interleave mid-frame, so only one process
 * may drive a sandbox's server at a time: an exec takes an flock on
 * STATE_DIR/ID.lock first, and when another process holds it, the exec
 * takes the API path (concurrent, as before) instead of waiting.  All
 * clients see all output; frames of other ids are skipped.
 *
 * A connection that ended between execs is reopened.  One that ends
 * during an exec, or a server that died, is an error that says which
 * (never a hang: the deadlines of the API path apply).  The connection
 * itself is conn.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/conn.h"

#define GRACE_KILL_MS 5000
#define GRACE_GIVEUP_MS 10000

static int push(struct dk_xrun *r, char type, uint64_t id, const void *data, size_t len)
{
    unsigned char *nb = realloc(r->snd, r->snd_len + SRV_HDR + len);
    if (!nb)
        return SBX_E_NOMEM;
    srv_put_hdr(nb + r->snd_len, type, id, (uint32_t)len);
    if (len)
        memcpy(nb + r->snd_len + SRV_HDR, data, len);
    r->snd = nb;
    r->snd_len += SRV_HDR + len;
    return SBX_OK;
}

/* A control frame of the served exec: stdin ('D', 'E'), signals ('S'). */
static int push_own(struct dk_xrun *r, char type, const void *data, size_t len)
{
    return push(r, type, r->id, data, len);
}


/* mkdir -p (0700 for what it makes). */
static int mkdir_p(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return -1;
    for (char *s = buf + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return -1;
        if (!c)
            return 0;
        *s = c;
    }
}

static void lock_path(struct dk_engine *e, const char *id, char *path, size_t cap)
{
    const char *dir = e->host->state_dir(e->h);
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(path, cap, "%s/%s.lock", dir, id);
}

/* Takes the sandbox's lock for this exec: 1 taken, 0 busy (another
 * process drives the server), -1 no lock file (use the API path). */
static int lock_take(struct dk_engine *e, struct dk_sb *sb)
{
    if (sb->lock_fd < 0) {
        const char *dir = e->host->state_dir(e->h);
        char path[4200];
        if (dir && *dir && mkdir_p(dir) < 0) {
            e->host->log(e->h, SBX_LOG_WARNING, "state directory %s: %s (execs take the "
                         "daemon's exec path)", dir, strerror(errno));
            return -1;
        }
        lock_path(e, sb->id, path, sizeof path);
        sb->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (sb->lock_fd < 0)
            return -1;
    }
    if (flock(sb->lock_fd, LOCK_EX | LOCK_NB) == 0)
        return 1;
    return errno == EWOULDBLOCK ? 0 : -1;
}

void dk_serve_prepare(struct dk_engine *e, struct dk_sb *sb)
{
    /* On failure the first exec tries again and reports the error. */
    if (!sb->conn)
        dk_conn_open(e, sb, &sb->conn);
}

void dk_serve_forget(struct dk_engine *e, struct dk_sb *sb)
{
    char path[4200];
    dk_serve_close(sb);
    lock_path(e, sb->id, path, sizeof path);
    unlink(path); /* absent for sandboxes that never served an exec */
}

void dk_serve_close(struct dk_sb *sb)
{
    if (!sb)
        return;
    dk_conn_free(sb->conn);
    sb->conn = NULL;
    if (sb->lock_fd >= 0)
        close(sb->lock_fd);
    sb->lock_fd = -1;
}

/* Why the connection ended during an exec: the server (the container)
 * is gone, or only the connection. */
static int lost_error(struct dk_engine *e, struct dk_sb *sb)
{
    struct sb_state st;
    dk_inspect_state(e, sb, &st);
    if (st.status == 404)
        return dk_err(e, SBX_E_NOT_FOUND, "sandbox %s was removed during the exec", sb->id);
    if (!st.ret && !st.running)
        return dk_err(e, SBX_E_BACKEND, "sandbox %s stopped during the exec: its exec server "
                      "(PID 1) exited (exit code %lld%s)", sb->id, st.code,
                      st.oom ? ", killed for lack of memory" : "");
    return dk_err(e, SBX_E_BACKEND, "the attach connection to sandbox %s ended during the exec "
                  "(its exec server ends the command within %d s)", sb->id, SRV_LEASE_MS / 1000);
}

/* The request frame: the wrapper's options and the command (or
 * DK_USE_API when it does not fit in a frame). */
static int push_request(struct dk_engine *e, struct dk_sb *sb, struct dk_xrun *r, uint64_t id)
{
    const sbx_exec_spec_v1 *spec = r->spec;
    int ret = SBX_OK;
    json_t *cmd = dk_build_cmd(e, sb, spec, &ret);
    if (!cmd)
        return ret;
    size_t len = 0, n = json_array_size(cmd);
    for (size_t i = 1; i < n; i++)
        len += strlen(json_string_value(json_array_get(cmd, i))) + 1;
    for (size_t i = 0; i < spec->n_env; i++)
        len += 3 + strlen(spec->env[i].key) + 1 + strlen(spec->env[i].value) + 1;
    len += 3 + 11; /* -l MS */
    if (len > SRV_FRAME_MAX) {
        /* Larger than a frame: the daemon's exec takes it. */
        json_decref(cmd);
        return DK_USE_API;
    }
    char *req = malloc(len ? len : 1), *w = req;
    if (!req) {
        json_decref(cmd);
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    }
    for (size_t i = 1; i < n; i++) {
        const char *a = json_string_value(json_array_get(cmd, i));
        if (!strcmp(a, "--")) {
            /* The lease, and the environment, go with the options. */
            w += sprintf(w, "-l%c%u", '\0', (unsigned)SRV_LEASE_MS) + 1;
            for (size_t k = 0; k < spec->n_env; k++)
                w += sprintf(w, "-e%c%s=%s", '\0', spec->env[k].key, spec->env[k].value) + 1;
        }
        w += strlen(strcpy(w, a)) + 1;
    }
    json_decref(cmd);
    ret = push(r, 'R', id, req, (size_t)(w - req));
    free(req);
    const unsigned char *in = spec->stdin_data;
    for (size_t off = 0; !ret && off < spec->stdin_len; off += SRV_FRAME_MAX) {
        size_t l = spec->stdin_len - off < SRV_FRAME_MAX ? spec->stdin_len - off : SRV_FRAME_MAX;
        ret = push(r, 'D', id, in + off, l);
    }
    if (!ret && spec->stdin_len)
        ret = push(r, 'E', id, NULL, 0);
    if (!ret) {
        r->id = id;
        dk_xrun_control(r, push_own);
    }
    return ret ? dk_err(e, ret, "out of memory") : SBX_OK;
}

static int run(struct dk_engine *e, struct dk_sb *sb, struct dk_xrun *r)
{
    const sbx_exec_spec_v1 *spec = r->spec;
    uint64_t t0 = dk_now_ns(), id = 0;
    int ret;
    if (sb->conn && !dk_conn_usable(sb->conn)) {
        dk_conn_free(sb->conn);
        sb->conn = NULL;
    }
    if (!sb->conn && (ret = dk_conn_open(e, sb, &sb->conn)))
        return ret;
    struct dk_conn *c = sb->conn;
    while (!id || id == SRV_SYNC_ID)
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
            return dk_err(e, SBX_E_IO, "getrandom: %s", strerror(errno));
    if ((ret = push_request(e, sb, r, id)))
        return ret;
    c->cur = id;
    c->r = r;
    c->done = c->lost = false;
    r->out->start_ns = dk_now_ns() - t0;
    uint64_t deadline = t0 + spec->timeout_ns + (uint64_t)GRACE_KILL_MS * 1000000u;
    uint64_t giveup = deadline + (uint64_t)GRACE_GIVEUP_MS * 1000000u;
    uint64_t ping = t0 + (uint64_t)SRV_PING_MS * 1000000u;
    ret = SBX_OK;
    while (!c->done && !c->lost) {
        if (c->desync) {
            ret = dk_err(e, SBX_E_BACKEND, "exec in %s: %s", sb->id, c->msg);
            break;
        }
        if (c->eof) {
            ret = lost_error(e, sb);
            break;
        }
        if (r->kill != WK_NONE && !r->kill_sent) {
            r->kill_sent = true;
            if (push(r, 'K', id, NULL, 0)) {
                ret = dk_err(e, SBX_E_NOMEM, "out of memory");
                break;
            }
        }
        uint64_t now = dk_now_ns();
        if (now >= ping) {
            /* We still wait: renew the exec's lease. */
            if (push(r, 'P', id, NULL, 0)) {
                ret = dk_err(e, SBX_E_NOMEM, "out of memory");
                break;
            }
            ping = now + (uint64_t)SRV_PING_MS * 1000000u;
        }
        if (now >= deadline && r->kill == WK_NONE) {
            r->kill = WK_BACKSTOP;
            continue;
        }
        if (now >= giveup) {
            ret = dk_err(e, SBX_E_TIMEOUT, "exec in %s: no answer from its exec server %d s "
                         "after the time limit", sb->id, (GRACE_KILL_MS + GRACE_GIVEUP_MS) / 1000);
            c->desync = true; /* start afresh next time */
            break;
        }
        short events = POLLIN, revents;
        if (r->snd_off < r->snd_len)
            events |= POLLOUT;
        uint64_t until = r->kill == WK_NONE ? deadline : giveup;
        if (ping < until)
            until = ping;
        int pr = dk_xrun_poll(r, c->fd, events, (int)((until - now) / 1000000u) + 1, &revents);
        if (pr < 0 && errno != EINTR) {
            ret = dk_err(e, SBX_E_IO, "poll: %s", strerror(errno));
            break;
        }
        if (pr <= 0)
            continue;
        if ((revents & POLLOUT) && r->snd_off < r->snd_len && !dk_xrun_send(r, c->h))
            c->eof = true;
        if (revents & (POLLIN | POLLHUP | POLLERR))
            dk_conn_read(c);
    }
    c->r = NULL;
    c->cur = 0;
    r->out->exec_ns = dk_now_ns() - t0 - r->out->start_ns;
    if (ret)
        return ret;
    if (dk_xrun_cancelled(r, sb->id))
        return SBX_E_CANCELLED;
    if (c->lost)
        return dk_err(e, SBX_E_BACKEND, "exec in %s: %s", sb->id, c->msg);
    return dk_xrun_report(r, sb, &c->rep);
}

int dk_serve_exec(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                  const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    int ret = dk_env_check(e, spec);
    if (ret)
        return ret;
    int lk = lock_take(e, sb);
    if (lk <= 0)
        return DK_USE_API;
    struct dk_xrun r = {.e = e, .spec = spec, .sink = sink, .out = out};
    ret = run(e, sb, &r);
    free(r.snd);
    if (ret && sb->conn && (sb->conn->eof || sb->conn->desync)) {
        dk_conn_free(sb->conn);
        sb->conn = NULL;
    }
    flock(sb->lock_fd, LOCK_UN);
    return ret;
}
