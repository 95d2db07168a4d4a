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
 * (never a hang: the deadlines of the API path apply).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-int.h"
#include "init/proto.h"

#define GRACE_KILL_MS 5000
#define GRACE_GIVEUP_MS 10000
#define OPEN_TIMEOUT_MS 10000

struct dk_conn {
    CURL *h;
    curl_socket_t fd;
    struct dk_demux dm;            /* Docker's 8-byte frames */
    char head[4096];               /* the HTTP answer's head */
    size_t head_len;
    bool head_done;
    long status;
    /* The server's frames. */
    unsigned char hdr[SRV_HDR];
    size_t hdr_got;
    char type;
    uint64_t id;
    size_t left;
    char text[512];                /* 'X', 'L', 'Z' payloads */
    size_t text_len;
    /* The exec under way. */
    uint64_t cur;
    struct dk_xrun *r;
    bool done, lost, desync;
    /* Finding our place in the output (after a probe). */
    bool scanning;
    unsigned char want[SRV_HDR];   /* the probe's answer */
    unsigned char win[SRV_HDR];    /* the last bytes seen */
    size_t win_len;
    char msg[512];
    struct dk_report rep;
    bool eof;
};

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

/* A complete 'X', 'L' or 'Z' frame. */
static void on_text(struct dk_conn *c)
{
    c->text[c->text_len < sizeof c->text ? c->text_len : sizeof c->text - 1] = '\0';
    if (c->type == 'Z') {
        c->desync = true;
        snprintf(c->msg, sizeof c->msg, "%s", c->text);
        return;
    }
    if (!c->r || c->id != c->cur)
        return;
    if (c->type == 'X') {
        if (dk_report_parse(c->text, &c->rep)) {
            c->done = true;
            return;
        }
        snprintf(c->msg, sizeof c->msg, "a report that does not parse: '%.200s'", c->text);
    } else {
        snprintf(c->msg, sizeof c->msg, "%s", c->text);
    }
    c->lost = true;
}

/* The server's stdout: its frames, split anywhere. */
static int srv_bytes(struct dk_conn *c, const unsigned char *b, size_t n)
{
    while (n && c->scanning) {
        /* Output before the probe's answer belongs to nobody we know,
         * and may start inside a frame. */
        if (c->win_len == SRV_HDR) {
            memmove(c->win, c->win + 1, SRV_HDR - 1);
            c->win_len--;
        }
        c->win[c->win_len++] = *b++;
        n--;
        if (c->win_len == SRV_HDR && !memcmp(c->win, c->want, SRV_HDR)) {
            c->scanning = false;
            c->hdr_got = 0;
            c->desync = false; /* 'Z' seen while scanning was before our sync */
        }
    }
    while (n) {
        if (c->desync)
            return 0; /* reconnect (and sync) before the next exec */
        if (c->hdr_got < SRV_HDR) {
            size_t take = SRV_HDR - c->hdr_got < n ? SRV_HDR - c->hdr_got : n;
            memcpy(c->hdr + c->hdr_got, b, take);
            c->hdr_got += take;
            b += take;
            n -= take;
            if (c->hdr_got < SRV_HDR)
                return 0;
            c->type = (char)c->hdr[2];
            c->id = 0;
            for (int i = 0; i < 8; i++)
                c->id = c->id << 8 | c->hdr[4 + i];
            c->left = (size_t)c->hdr[12] << 24 | (size_t)c->hdr[13] << 16 |
                      (size_t)c->hdr[14] << 8 | c->hdr[15];
            c->text_len = 0;
            if (c->hdr[0] != SRV_MAGIC0 || c->hdr[1] != SRV_MAGIC1 || c->left > SRV_FRAME_MAX) {
                c->desync = true;
                snprintf(c->msg, sizeof c->msg, "the exec server's output is not framed as "
                         "expected");
                return 0;
            }
        }
        size_t take = c->left < n ? c->left : n;
        if ((c->type == '1' || c->type == '2') && c->r && c->id == c->cur && take)
            dk_xrun_output(c->r, c->type == '1' ? SBX_STREAM_STDOUT : SBX_STREAM_STDERR, b, take);
        else if (c->type == 'X' || c->type == 'L' || c->type == 'Z') {
            size_t room = sizeof c->text - c->text_len;
            size_t t = take < room ? take : room;
            memcpy(c->text + c->text_len, b, t);
            c->text_len += t;
        }
        c->left -= take;
        b += take;
        n -= take;
        if (c->left == 0) {
            c->hdr_got = 0;
            if (c->type == 'X' || c->type == 'L' || c->type == 'Z')
                on_text(c);
        }
    }
    return 0;
}

static int on_stream(void *ud, int stream, const void *buf, size_t len)
{
    struct dk_conn *c = ud;
    if (stream == SBX_STREAM_STDOUT)
        return srv_bytes(c, buf, len);
    return 0; /* the server's own stderr: it writes none */
}

static void conn_free(struct dk_conn *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    free(c);
}

/* Reads what the connection has; false at its end. */
static bool conn_read(struct dk_conn *c)
{
    unsigned char buf[65536];
    for (;;) {
        size_t got = 0;
        CURLcode cc = curl_easy_recv(c->h, buf, sizeof buf, &got);
        if (cc == CURLE_AGAIN)
            return true;
        if (cc != CURLE_OK || got == 0) {
            c->eof = true;
            return false;
        }
        size_t used = 0;
        while (!c->head_done && used < got) {
            if (c->head_len < sizeof c->head - 1)
                c->head[c->head_len++] = (char)buf[used];
            used++;
            c->head[c->head_len] = '\0';
            if (c->head_len >= 4 && !memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4)) {
                c->head_done = true;
                if (sscanf(c->head, "HTTP/1.%*d %ld", &c->status) != 1)
                    c->status = 0;
                if (c->status != 101 && c->status != 200) {
                    /* Keep the start of the body: it says why. */
                    size_t ml = got - used < 200 ? got - used : 200;
                    c->head_len = 0;
                    memcpy(c->head, buf + used, ml);
                    c->head[ml] = '\0';
                    c->eof = true;
                    return false;
                }
            }
        }
        if (used < got && dk_demux_feed(&c->dm, buf + used, got - used) < 0) {
            c->desync = true;
            snprintf(c->msg, sizeof c->msg, "the attach stream is not framed as expected");
        }
    }
}

/* Sends @len bytes of @buf, reading what comes meanwhile, until @until;
 * then, if @wait_probe, reads until the probe's answer or @until.  True
 * when all was sent (and the answer came). */
static bool exchange(struct dk_conn *c, const unsigned char *buf, size_t len, uint64_t until,
                     bool wait_probe)
{
    size_t off = 0;
    while (!c->eof && (off < len || (wait_probe && c->scanning))) {
        uint64_t now = dk_now_ns();
        if (now >= until)
            return false;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN | (off < len ? POLLOUT : 0)};
        int pr = poll(&pf, 1, (int)((until - now) / 1000000u) + 1);
        if (pr < 0 && errno != EINTR)
            return false;
        if (pr <= 0)
            continue;
        if ((pf.revents & POLLOUT) && off < len) {
            size_t sent = 0;
            CURLcode cc = curl_easy_send(c->h, buf + off, len - off, &sent);
            if (cc == CURLE_OK)
                off += sent;
            else if (cc != CURLE_AGAIN)
                return false;
        }
        if (pf.revents & (POLLIN | POLLHUP | POLLERR))
            conn_read(c);
    }
    return !c->eof && off == len && !(wait_probe && c->scanning);
}

/* Sync and probe frames with a fresh probe id into @buf (2 frames). */
static int sync_probe(struct dk_conn *c, unsigned char *buf)
{
    uint64_t id = 0;
    while (!id || id == SRV_SYNC_ID)
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
            return -1;
    srv_put_hdr(buf, 'Y', SRV_SYNC_ID, 0);
    srv_put_hdr(buf + SRV_HDR, 'Q', id, 0);
    srv_put_hdr(c->want, 'q', id, 0);
    c->scanning = true;
    c->win_len = 0;
    return 0;
}

/* A new connection finds its place in both streams (init/proto.h). */
static int handshake(struct dk_prov *p, struct dk_sb *sb, struct dk_conn *c,
                     unsigned char *sp)
{
    if (sync_probe(c, sp) < 0)
        return dk_err(p, SBX_E_IO, "getrandom: %s", strerror(errno));
    if (exchange(c, sp, 2 * SRV_HDR, dk_now_ns() + (uint64_t)SRV_PROBE_MS * 1000000u, true))
        return SBX_OK;
    if (c->eof)
        return dk_err(p, SBX_E_BACKEND, "attaching to sandbox %s: the connection ended at "
                      "once (is its exec server running?)", sb->id);
    /* Maybe inside a frame whose writer died: end it, then sync again.
     * At most SRV_HDR + SRV_FRAME_MAX - 1 bytes are missing from such a
     * frame, so after these zeros at least SRV_HDR + 1 are left: a header
     * of zeros (no magic) that sends the server looking for the sync
     * frame, which follows whole. */
    size_t fl = SRV_FRAME_MAX + 2 * SRV_HDR;
    unsigned char *filler = calloc(1, fl + 2 * SRV_HDR);
    if (!filler)
        return dk_err(p, SBX_E_NOMEM, "out of memory");
    bool ok = sync_probe(c, filler + fl) == 0 &&
              exchange(c, filler, fl + 2 * SRV_HDR,
                       dk_now_ns() + (uint64_t)SRV_PROBE_MAX_MS * 1000000u, true);
    free(filler);
    if (ok)
        return SBX_OK;
    return dk_err(p, SBX_E_BACKEND, "attaching to sandbox %s: its exec server does not answer "
                  "(%s)", sb->id, c->eof ? "the connection ended" : "no answer in time");
}

/* The container's state, as GET /containers/ID/json tells it. */
struct sb_state {
    int ret;        /* SBX_OK, or why the inspection failed (in err) */
    long status;    /* the HTTP status: 404 when the container is gone */
    bool running, oom;
    long long code; /* the exit code of its first process, when stopped */
    char err[PH_ERR_MAX];
};

static void inspect_state(struct dk_prov *p, struct dk_sb *sb, struct sb_state *st)
{
    char path[200];
    json_t *ans = NULL;
    st->status = 0;
    snprintf(path, sizeof path, DK_API "/containers/%s/json", sb->id);
    st->ret = dk_json(p, "GET", path, NULL, 10000, &st->status, &ans, st->err);
    json_t *state = json_object_get(ans, "State");
    st->running = json_is_true(json_object_get(state, "Running"));
    st->code = json_integer_value(json_object_get(state, "ExitCode"));
    st->oom = json_is_true(json_object_get(state, "OOMKilled"));
    json_decref(ans);
}

/* SBX_OK when the container runs; otherwise an error saying why. */
static int check_running(struct dk_prov *p, struct dk_sb *sb)
{
    struct sb_state st;
    inspect_state(p, sb, &st);
    if (st.status == 404)
        return dk_err(p, SBX_E_NOT_FOUND, "no sandbox %s", sb->id);
    if (st.ret)
        return dk_err(p, st.ret, "inspecting sandbox %s: %s", sb->id, st.err);
    if (!st.running)
        return dk_err(p, SBX_E_BACKEND, "sandbox %s is not running: its exec server (PID 1) "
                      "has exited (exit code %lld)", sb->id, st.code);
    return SBX_OK;
}

/* Opens the attach connection of @sb; sets the error on failure. */
static int conn_open(struct dk_prov *p, struct dk_sb *sb, struct dk_conn **out)
{
    char path[200], err[PH_ERR_MAX], req[512];
    struct dk_conn *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c || !(c->h = curl_easy_init())) {
        free(c);
        return dk_err(p, SBX_E_NOMEM, "out of memory");
    }
    c->fd = CURL_SOCKET_BAD;
    dk_demux_init(&c->dm, "", on_stream, c);
    c->dm.mark_len = 0; /* no report mark on this stream */
    snprintf(path, sizeof path, DK_API "/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1",
             sb->id);
    int ret = ph_client_setup_handle(p->http, c->h, path, err);
    if (ret) {
        conn_free(c);
        return dk_err(p, ret, "%s", err);
    }
    curl_easy_setopt(c->h, CURLOPT_CONNECT_ONLY, 1L);
    CURLcode cc = curl_easy_perform(c->h);
    if (cc == CURLE_OK)
        cc = curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &c->fd);
    if (cc != CURLE_OK || c->fd == CURL_SOCKET_BAD) {
        conn_free(c);
        return dk_err(p, SBX_E_NETWORK, "connecting to %s to attach to %s: %s", p->socket,
                      sb->id, curl_easy_strerror(cc));
    }
    /* The request; the sync and probe frames go once the daemon has
     * upgraded the connection (bytes before are not the container's). */
    unsigned char sync[2 * SRV_HDR];
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: polysandbox\r\n"
                     "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n", path);
    size_t off = 0, total = (size_t)n;
    uint64_t until = dk_now_ns() + (uint64_t)OPEN_TIMEOUT_MS * 1000000u;
    while (!c->head_done && !c->eof) {
        struct pollfd pf = {.fd = c->fd, .events = POLLIN | (off < total ? POLLOUT : 0)};
        uint64_t now = dk_now_ns();
        if (now >= until)
            break;
        int pr = poll(&pf, 1, (int)((until - now) / 1000000u) + 1);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        if ((pf.revents & POLLOUT) && off < total) {
            size_t sent = 0;
            cc = curl_easy_send(c->h, req + off, total - off, &sent);
            if (cc == CURLE_OK)
                off += sent;
            else if (cc != CURLE_AGAIN)
                break;
        }
        if (pf.revents & (POLLIN | POLLHUP | POLLERR))
            conn_read(c);
    }
    if (!c->head_done || c->status != 101) {
        long st = c->status;
        char body[220];
        snprintf(body, sizeof body, "%.200s", c->head_done ? c->head : "no answer");
        body[strcspn(body, "\r\n")] = '\0';
        conn_free(c);
        if (st == 404)
            return dk_err(p, SBX_E_NOT_FOUND, "no sandbox %s (%s)", sb->id, body);
        if (st == 409)
            return dk_err(p, SBX_E_BACKEND, "sandbox %s is not running: its exec server (PID 1) "
                          "has exited (%s)", sb->id, body);
        return dk_err(p, st ? (ph_status_code(st) ? ph_status_code(st) : SBX_E_BACKEND)
                            : SBX_E_NETWORK,
                      "attaching to sandbox %s: %s%s", sb->id,
                      st ? "the daemon refused: " : "", body);
    }
    /* The daemon lets a client attach to a stopped container (and hands
     * it the streams of the next start): requests must not wait there
     * for a server that may never come.  Right after create or attach
     * the container is known to run; later, ask. */
    if (!sb->running_known && (ret = check_running(p, sb))) {
        conn_free(c);
        return ret;
    }
    sb->running_known = false;
    ret = handshake(p, sb, c, sync);
    if (ret) {
        conn_free(c);
        return ret;
    }
    *out = c;
    return SBX_OK;
}

/* The connection is still open and in step (drains what came meanwhile:
 * output of other processes' execs). */
static bool conn_usable(struct dk_conn *c)
{
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    if (poll(&pf, 1, 0) > 0 && !conn_read(c))
        return false;
    return !c->eof && !c->desync;
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

static void lock_path(struct dk_prov *p, const char *id, char *path, size_t cap)
{
    const char *dir = p->host->state_dir(p->h);
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(path, cap, "%s/%s.lock", dir, id);
}

/* Takes the sandbox's lock for this exec: 1 taken, 0 busy (another
 * process drives the server), -1 no lock file (use the API path). */
static int lock_take(struct dk_prov *p, struct dk_sb *sb)
{
    if (sb->lock_fd < 0) {
        const char *dir = p->host->state_dir(p->h);
        char path[4200];
        if (dir && *dir && mkdir_p(dir) < 0) {
            p->host->log(p->h, SBX_LOG_WARNING, "state directory %s: %s (execs take the "
                         "daemon's exec path)", dir, strerror(errno));
            return -1;
        }
        lock_path(p, sb->id, path, sizeof path);
        sb->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (sb->lock_fd < 0)
            return -1;
    }
    if (flock(sb->lock_fd, LOCK_EX | LOCK_NB) == 0)
        return 1;
    return errno == EWOULDBLOCK ? 0 : -1;
}

void dk_serve_prepare(struct dk_prov *p, struct dk_sb *sb)
{
    /* On failure the first exec tries again and reports the error. */
    if (!sb->conn)
        conn_open(p, sb, &sb->conn);
}

void dk_serve_forget(struct dk_prov *p, struct dk_sb *sb)
{
    char path[4200];
    dk_serve_close(sb);
    lock_path(p, sb->id, path, sizeof path);
    unlink(path); /* absent for sandboxes that never served an exec */
}

void dk_serve_close(struct dk_sb *sb)
{
    if (!sb)
        return;
    conn_free(sb->conn);
    sb->conn = NULL;
    if (sb->lock_fd >= 0)
        close(sb->lock_fd);
    sb->lock_fd = -1;
}

/* Why the connection ended during an exec: the server (the container)
 * is gone, or only the connection. */
static int lost_error(struct dk_prov *p, struct dk_sb *sb)
{
    struct sb_state st;
    inspect_state(p, sb, &st);
    if (st.status == 404)
        return dk_err(p, SBX_E_NOT_FOUND, "sandbox %s was removed during the exec", sb->id);
    if (!st.ret && !st.running)
        return dk_err(p, SBX_E_BACKEND, "sandbox %s stopped during the exec: its exec server "
                      "(PID 1) exited (exit code %lld%s)", sb->id, st.code,
                      st.oom ? ", killed for lack of memory" : "");
    return dk_err(p, SBX_E_BACKEND, "the attach connection to sandbox %s ended during the exec "
                  "(its exec server ends the command within %d s)", sb->id, SRV_LEASE_MS / 1000);
}

/* The request frame: the wrapper's options and the command (or
 * DK_USE_API when it does not fit in a frame). */
static int push_request(struct dk_prov *p, struct dk_sb *sb, struct dk_xrun *r, uint64_t id)
{
    const sbx_exec_spec_v1 *spec = r->spec;
    int ret = SBX_OK;
    json_t *cmd = dk_build_cmd(p, sb, spec, &ret);
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
        return dk_err(p, SBX_E_NOMEM, "out of memory");
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
    return ret ? dk_err(p, ret, "out of memory") : SBX_OK;
}

static int run(struct dk_prov *p, struct dk_sb *sb, struct dk_xrun *r)
{
    const sbx_exec_spec_v1 *spec = r->spec;
    uint64_t t0 = dk_now_ns(), id = 0;
    int ret;
    if (sb->conn && !conn_usable(sb->conn)) {
        conn_free(sb->conn);
        sb->conn = NULL;
    }
    if (!sb->conn && (ret = conn_open(p, sb, &sb->conn)))
        return ret;
    struct dk_conn *c = sb->conn;
    while (!id || id == SRV_SYNC_ID)
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
            return dk_err(p, SBX_E_IO, "getrandom: %s", strerror(errno));
    if ((ret = push_request(p, sb, r, id)))
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
            ret = dk_err(p, SBX_E_BACKEND, "exec in %s: %s", sb->id, c->msg);
            break;
        }
        if (c->eof) {
            ret = lost_error(p, sb);
            break;
        }
        if (r->kill != WK_NONE && !r->kill_sent) {
            r->kill_sent = true;
            if (push(r, 'K', id, NULL, 0)) {
                ret = dk_err(p, SBX_E_NOMEM, "out of memory");
                break;
            }
        }
        uint64_t now = dk_now_ns();
        if (now >= ping) {
            /* We still wait: renew the exec's lease. */
            if (push(r, 'P', id, NULL, 0)) {
                ret = dk_err(p, SBX_E_NOMEM, "out of memory");
                break;
            }
            ping = now + (uint64_t)SRV_PING_MS * 1000000u;
        }
        if (now >= deadline && r->kill == WK_NONE) {
            r->kill = WK_BACKSTOP;
            continue;
        }
        if (now >= giveup) {
            ret = dk_err(p, SBX_E_TIMEOUT, "exec in %s: no answer from its exec server %d s "
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
            ret = dk_err(p, SBX_E_IO, "poll: %s", strerror(errno));
            break;
        }
        if (pr <= 0)
            continue;
        if ((revents & POLLOUT) && r->snd_off < r->snd_len && !dk_xrun_send(r, c->h))
            c->eof = true;
        if (revents & (POLLIN | POLLHUP | POLLERR))
            conn_read(c);
    }
    c->r = NULL;
    c->cur = 0;
    r->out->exec_ns = dk_now_ns() - t0 - r->out->start_ns;
    if (ret)
        return ret;
    if (dk_xrun_cancelled(r, sb->id))
        return SBX_E_CANCELLED;
    if (c->lost)
        return dk_err(p, SBX_E_BACKEND, "exec in %s: %s", sb->id, c->msg);
    return dk_xrun_report(r, sb, &c->rep);
}

int dk_serve_exec(struct dk_prov *p, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                  const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    int ret = dk_env_check(p, spec);
    if (ret)
        return ret;
    int lk = lock_take(p, sb);
    if (lk <= 0)
        return DK_USE_API;
    struct dk_xrun r = {.p = p, .spec = spec, .sink = sink, .out = out};
    ret = run(p, sb, &r);
    free(r.snd);
    if (ret && sb->conn && (sb->conn->eof || sb->conn->desync)) {
        conn_free(sb->conn);
        sb->conn = NULL;
    }
    flock(sb->lock_fd, LOCK_UN);
    return ret;
}
