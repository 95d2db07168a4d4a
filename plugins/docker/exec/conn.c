/* plugins/docker/exec/conn.c - the attach connection to a sandbox's exec
 * server: POST /containers/ID/attach hijacked like an exec start, the
 * sync and probe that find our place in both streams (init/proto.h), and
 * the server's frames read out of Docker's stdout frames
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "exec/conn.h"

#define OPEN_TIMEOUT_MS 10000

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

void dk_conn_free(struct dk_conn *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    free(c);
}

/* Reads what the connection has; false at its end. */
bool dk_conn_read(struct dk_conn *c)
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
            dk_conn_read(c);
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
static int handshake(struct dk_engine *e, struct dk_sb *sb, struct dk_conn *c,
                     unsigned char *sp)
{
    if (sync_probe(c, sp) < 0)
        return dk_err(e, SBX_E_IO, "getrandom: %s", strerror(errno));
    if (exchange(c, sp, 2 * SRV_HDR, dk_now_ns() + (uint64_t)SRV_PROBE_MS * 1000000u, true))
        return SBX_OK;
    if (c->eof)
        return dk_err(e, SBX_E_BACKEND, "attaching to sandbox %s: the connection ended at "
                      "once (is its exec server running?)", sb->id);
    /* Maybe inside a frame whose writer died: end it, then sync again.
     * At most SRV_HDR + SRV_FRAME_MAX - 1 bytes are missing from such a
     * frame, so after these zeros at least SRV_HDR + 1 are left: a header
     * of zeros (no magic) that sends the server looking for the sync
     * frame, which follows whole. */
    size_t fl = SRV_FRAME_MAX + 2 * SRV_HDR;
    unsigned char *filler = calloc(1, fl + 2 * SRV_HDR);
    if (!filler)
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    bool ok = sync_probe(c, filler + fl) == 0 &&
              exchange(c, filler, fl + 2 * SRV_HDR,
                       dk_now_ns() + (uint64_t)SRV_PROBE_MAX_MS * 1000000u, true);
    free(filler);
    if (ok)
        return SBX_OK;
    return dk_err(e, SBX_E_BACKEND, "attaching to sandbox %s: its exec server does not answer "
                  "(%s)", sb->id, c->eof ? "the connection ended" : "no answer in time");
}


void dk_inspect_state(struct dk_engine *e, struct dk_sb *sb, struct sb_state *st)
{
    char path[200];
    json_t *ans = NULL;
    st->status = 0;
    snprintf(path, sizeof path, DK_API "/containers/%s/json", sb->id);
    st->ret = dk_json(e, "GET", path, NULL, 10000, &st->status, &ans, st->err);
    json_t *state = json_object_get(ans, "State");
    st->running = json_is_true(json_object_get(state, "Running"));
    st->code = json_integer_value(json_object_get(state, "ExitCode"));
    st->oom = json_is_true(json_object_get(state, "OOMKilled"));
    json_decref(ans);
}

/* SBX_OK when the container runs; otherwise an error saying why. */
static int check_running(struct dk_engine *e, struct dk_sb *sb)
{
    struct sb_state st;
    dk_inspect_state(e, sb, &st);
    if (st.status == 404)
        return dk_err(e, SBX_E_NOT_FOUND, "no sandbox %s", sb->id);
    if (st.ret)
        return dk_err(e, st.ret, "inspecting sandbox %s: %s", sb->id, st.err);
    if (!st.running)
        return dk_err(e, SBX_E_BACKEND, "sandbox %s is not running: its exec server (PID 1) "
                      "has exited (exit code %lld)", sb->id, st.code);
    return SBX_OK;
}

/* Opens the attach connection of @sb; sets the error on failure. */
int dk_conn_open(struct dk_engine *e, struct dk_sb *sb, struct dk_conn **out)
{
    char path[200], err[PH_ERR_MAX], req[512];
    struct dk_conn *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c || !(c->h = curl_easy_init())) {
        free(c);
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    }
    c->fd = CURL_SOCKET_BAD;
    dk_demux_init(&c->dm, "", on_stream, c);
    c->dm.mark_len = 0; /* no report mark on this stream */
    snprintf(path, sizeof path, DK_API "/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1",
             sb->id);
    int ret = ph_client_setup_handle(e->http, c->h, path, err);
    if (ret) {
        dk_conn_free(c);
        return dk_err(e, ret, "%s", err);
    }
    curl_easy_setopt(c->h, CURLOPT_CONNECT_ONLY, 1L);
    CURLcode cc = curl_easy_perform(c->h);
    if (cc == CURLE_OK)
        cc = curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &c->fd);
    if (cc != CURLE_OK || c->fd == CURL_SOCKET_BAD) {
        dk_conn_free(c);
        return dk_err(e, SBX_E_NETWORK, "connecting to %s to attach to %s: %s", e->socket,
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
            dk_conn_read(c);
    }
    if (!c->head_done || c->status != 101) {
        long st = c->status;
        char body[220];
        snprintf(body, sizeof body, "%.200s", c->head_done ? c->head : "no answer");
        body[strcspn(body, "\r\n")] = '\0';
        dk_conn_free(c);
        if (st == 404)
            return dk_err(e, SBX_E_NOT_FOUND, "no sandbox %s (%s)", sb->id, body);
        if (st == 409)
            return dk_err(e, SBX_E_BACKEND, "sandbox %s is not running: its exec server (PID 1) "
                          "has exited (%s)", sb->id, body);
        return dk_err(e, st ? (ph_status_code(st) ? ph_status_code(st) : SBX_E_BACKEND)
                            : SBX_E_NETWORK,
                      "attaching to sandbox %s: %s%s", sb->id,
                      st ? "the daemon refused: " : "", body);
    }
    /* The daemon lets a client attach to a stopped container (and hands
     * it the streams of the next start): requests must not wait there
     * for a server that may never come.  Right after create or attach
     * the container is known to run; later, ask. */
    if (!sb->running_known && (ret = check_running(e, sb))) {
        dk_conn_free(c);
        return ret;
    }
    sb->running_known = false;
    ret = handshake(e, sb, c, sync);
    if (ret) {
        dk_conn_free(c);
        return ret;
    }
    *out = c;
    return SBX_OK;
}

/* The connection is still open and in step (drains what came meanwhile:
 * output of other processes' execs). */
bool dk_conn_usable(struct dk_conn *c)
{
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    if (poll(&pf, 1, 0) > 0 && !dk_conn_read(c))
        return false;
    return !c->eof && !c->desync;
}
