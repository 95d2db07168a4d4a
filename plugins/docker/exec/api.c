/* plugins/docker/exec/api.c - an exec through the daemon's exec API:
 * create, start on a hijacked connection, stream, report
 *
 * The command runs under the helper (init/init.c), which enforces the
 * wall timeout, kills every process the exec started when it ends, and
 * reports the real wait status on stderr behind a nonce.  The exec is
 * started with "Upgrade: tcp" on a connection of our own (libcurl
 * CONNECT_ONLY, the shared client's socket/TLS settings): we write the
 * request and then control frames (nonce, stdin, end of stdin, kill,
 * signals) as the helper's stdin, and read Docker's framed
 * stdout/stderr, both at once, so a command echoing a large stdin never
 * deadlocks.  We never
 * half-close: the end of the connection tells the helper to kill.
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
#include <time.h>

#include "exec/xrun.h"
#include "init/proto.h"

#define FRAME_MAX (1u << 20)
/* After the helper's own deadline, how long before we ask it to kill,
 * and how long after that before we give up on the daemon. */
#define GRACE_KILL_MS 5000
#define GRACE_GIVEUP_MS 10000

/* Appends one control frame to the send buffer. */
static int push_frame(struct dk_xrun *r, char type, const void *data, size_t len)
{
    size_t need = r->snd_len + 5 + len;
    unsigned char *nb = realloc(r->snd, need);
    if (!nb)
        return SBX_E_NOMEM;
    unsigned char *f = nb + r->snd_len;
    wrap_put_hdr(f, (char)type, (uint32_t)len);
    if (len)
        memcpy(f + 5, data, len);
    r->snd = nb;
    r->snd_len = need;
    return SBX_OK;
}

static int push_bytes(struct dk_xrun *r, const char *s, size_t len)
{
    unsigned char *nb = realloc(r->snd, r->snd_len + len);
    if (!nb)
        return SBX_E_NOMEM;
    memcpy(nb + r->snd_len, s, len);
    r->snd = nb;
    r->snd_len += len;
    return SBX_OK;
}

/* The nonce, stdin and its end, as control frames; streamed stdin
 * follows as it is read. */
static int push_control(struct dk_xrun *r, const char *nonce)
{
    int ret = push_frame(r, 'N', nonce, strlen(nonce));
    const unsigned char *in = r->spec->stdin_data;
    for (size_t off = 0; !ret && off < r->spec->stdin_len; off += FRAME_MAX) {
        size_t len = r->spec->stdin_len - off < FRAME_MAX ? r->spec->stdin_len - off : FRAME_MAX;
        ret = push_frame(r, 'D', in + off, len);
    }
    if (!ret && r->spec->stdin_fd < 0)
        ret = push_frame(r, 'E', NULL, 0);
    if (!ret)
        dk_xrun_control(r, push_frame);
    return ret;
}

static int create_exec(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                       char exec_id[80])
{
    int ret = 0;
    json_t *env = json_array();
    if (!env)
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    if ((ret = dk_env_check(e, spec))) {
        json_decref(env);
        return ret;
    }
    for (size_t i = 0; i < spec->n_env; i++) {
        const sbx_kv_v1 *kv = &spec->env[i];
        char *kve = malloc(strlen(kv->key) + strlen(kv->value) + 2);
        if (!kve || (sprintf(kve, "%s=%s", kv->key, kv->value),
                     json_array_append_new(env, json_string(kve)) < 0)) {
            free(kve);
            json_decref(env);
            return dk_err(e, SBX_E_NOMEM, "out of memory");
        }
        free(kve);
    }
    json_t *cmd = dk_build_cmd(e, sb, spec, &ret);
    if (!cmd) {
        json_decref(env);
        return ret;
    }
    json_t *body = json_pack("{s:b, s:b, s:b, s:b, s:o, s:o, s:s, s:s}", "AttachStdin", 1,
                             "AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "Cmd", cmd,
                             "Env", env, "WorkingDir", DK_WORKDIR, "User", "0:0");
    if (!body)
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    char path[200], err[PH_ERR_MAX];
    snprintf(path, sizeof path, DK_API "/containers/%s/exec", sb->id);
    json_t *ans = NULL;
    long status = 0;
    ret = dk_json(e, "POST", path, body, 30000, &status, &ans, err);
    json_decref(body);
    if (ret) {
        json_decref(ans);
        if (status == 409)
            return dk_err(e, SBX_E_BACKEND, "sandbox %s is not running (exec refused: %s)",
                          sb->id, err);
        if (status == 404)
            return dk_err(e, SBX_E_NOT_FOUND, "no sandbox %s (%s)", sb->id, err);
        return dk_err(e, ret, "exec in %s: %s", sb->id, err);
    }
    const char *id = json_string_value(json_object_get(ans, "Id"));
    if (!id || strlen(id) >= 80 || strspn(id, "0123456789abcdef") != strlen(id)) {
        json_decref(ans);
        return dk_err(e, SBX_E_BACKEND, "exec in %s: the daemon's answer has no exec id", sb->id);
    }
    snprintf(exec_id, 80, "%s", id);
    json_decref(ans);
    return SBX_OK;
}

/* ---- the hijacked connection ---- */

struct conn {
    CURL *h;
    curl_socket_t fd;
    char head[4096];        /* the HTTP answer's head, until the blank line */
    size_t head_len;
    bool head_done;
    long status;
};

/* Parses the answer's head out of @buf; returns the bytes consumed. */
static size_t take_head(struct conn *c, const char *buf, size_t n)
{
    size_t i = 0;
    while (i < n && !c->head_done) {
        if (c->head_len < sizeof c->head - 1)
            c->head[c->head_len++] = buf[i];
        i++;
        c->head[c->head_len] = '\0';
        if (c->head_len >= 4 && !memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4)) {
            c->head_done = true;
            if (sscanf(c->head, "HTTP/1.%*d %ld", &c->status) != 1)
                c->status = 0;
        }
    }
    return i;
}

static int run_stream(struct dk_xrun *r, struct dk_sb *sb, const char *exec_id, const char *nonce)
{
    struct dk_engine *e = r->e;
    const sbx_exec_spec_v1 *spec = r->spec;
    char path[160], err[PH_ERR_MAX], req[512];
    struct conn c = {.h = curl_easy_init(), .fd = CURL_SOCKET_BAD};
    struct dk_demux dm;
    int ret = SBX_OK;
    static const char body[] = "{\"Detach\":false,\"Tty\":false}";

    if (!c.h)
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    snprintf(path, sizeof path, DK_API "/exec/%s/start", exec_id);
    if ((ret = ph_client_setup_handle(e->http, c.h, path, err)) != SBX_OK) {
        curl_easy_cleanup(c.h);
        return dk_err(e, ret, "%s", err);
    }
    curl_easy_setopt(c.h, CURLOPT_CONNECT_ONLY, 1L);
    CURLcode cc = curl_easy_perform(c.h);
    if (cc == CURLE_OK)
        cc = curl_easy_getinfo(c.h, CURLINFO_ACTIVESOCKET, &c.fd);
    if (cc != CURLE_OK || c.fd == CURL_SOCKET_BAD) {
        curl_easy_cleanup(c.h);
        return dk_err(e, SBX_E_NETWORK, "connecting to %s for an exec: %s", e->socket,
                      curl_easy_strerror(cc));
    }
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: polysandbox\r\n"
                     "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, sizeof body - 1, body);
    /* The control frames go only after the daemon's answer: bytes sent
     * before the upgrade are not handed to the exec. */
    ret = push_bytes(r, req, (size_t)n);
    if (ret) {
        curl_easy_cleanup(c.h);
        return dk_err(e, ret, "out of memory for the exec's stdin");
    }

    dk_demux_init(&dm, nonce, dk_xrun_output, r);
    uint64_t t0 = dk_now_ns();
    uint64_t deadline = t0 + spec->timeout_ns + (uint64_t)GRACE_KILL_MS * 1000000u;
    uint64_t giveup = deadline + (uint64_t)GRACE_GIVEUP_MS * 1000000u;
    bool eof = false, started = false;
    unsigned char buf[65536];
    while (!eof) {
        if (r->kill != WK_NONE && !r->kill_sent) {
            r->kill_sent = true;
            if (push_frame(r, 'K', NULL, 0)) {
                ret = dk_err(e, SBX_E_NOMEM, "out of memory");
                break;
            }
        }
        uint64_t now = dk_now_ns();
        if (now >= deadline && r->kill == WK_NONE) {
            r->kill = WK_BACKSTOP;
            continue;
        }
        if (now >= giveup) {
            ret = dk_err(e, SBX_E_TIMEOUT, "exec in %s: no end from the daemon %d s after the "
                         "time limit", sb->id, (GRACE_KILL_MS + GRACE_GIVEUP_MS) / 1000);
            break;
        }
        short events = POLLIN, revents;
        if (r->snd_off < r->snd_len)
            events |= POLLOUT;
        uint64_t until = r->kill == WK_NONE ? deadline : giveup;
        int wait_ms = (int)((until - now) / 1000000u) + 1;
        int pr = dk_xrun_poll(r, c.fd, events, wait_ms, &revents);
        if (pr < 0 && errno != EINTR) {
            ret = dk_err(e, SBX_E_IO, "poll: %s", strerror(errno));
            break;
        }
        if (pr <= 0)
            continue;
        if ((revents & POLLOUT) && r->snd_off < r->snd_len && !dk_xrun_send(r, c.h))
            r->snd_off = r->snd_len; /* the helper is gone (exited): its output tells */
        if (!(revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        for (;;) {
            size_t got = 0;
            cc = curl_easy_recv(c.h, buf, sizeof buf, &got);
            if (cc == CURLE_AGAIN)
                break;
            if (cc != CURLE_OK || got == 0) {
                eof = true;
                break;
            }
            size_t used = 0;
            if (!c.head_done) {
                used = take_head(&c, (const char *)buf, got);
                if (c.head_done) {
                    if (c.status != 101 && c.status != 200) {
                        /* An error answer: its body (after the head) says why. */
                        char msg[300];
                        size_t ml = got - used < sizeof msg - 1 ? got - used : sizeof msg - 1;
                        memcpy(msg, buf + used, ml);
                        msg[ml] = '\0';
                        int code = ph_status_code(c.status);
                        ret = dk_err(e, code ? code : SBX_E_BACKEND,
                                     "starting the exec in %s: the daemon answered %ld: %s",
                                     sb->id, c.status, msg);
                        eof = true;
                        break;
                    }
                    started = true;
                    r->out->start_ns = dk_now_ns() - t0;
                    if ((ret = push_control(r, nonce))) {
                        dk_err(e, ret, "out of memory for the exec's stdin");
                        eof = true;
                        break;
                    }
                }
            }
            if (used < got && dk_demux_feed(&dm, buf + used, got - used) < 0) {
                ret = dk_err(e, SBX_E_BACKEND, "exec in %s: the daemon's stream is not "
                             "framed as expected (a tty?)", sb->id);
                eof = true;
                break;
            }
        }
    }
    curl_easy_cleanup(c.h);
    r->out->exec_ns = dk_now_ns() - t0 - r->out->start_ns;
    if (ret)
        return ret;
    if (dk_xrun_cancelled(r, sb->id))
        return SBX_E_CANCELLED;
    if (!started)
        return dk_err(e, SBX_E_BACKEND, "exec in %s: the daemon closed the connection without "
                      "an answer", sb->id);
    struct dk_report rep;
    bool have_report = dk_demux_finish(&dm, &rep);
    if (!have_report && r->kill != WK_OUTPUT)
        return dk_err(e, SBX_E_BACKEND, "exec in %s ended without the helper's report (the "
                      "sandbox was stopped or destroyed meanwhile?)", sb->id);
    if (!have_report) {
        /* The provider saw the output pass its cap and had the command
         * killed, so the status is known without the report, which Podman
         * may drop with the output still in flight; the report's CPU time
         * and memory are then unknown. */
        memcpy(rep.status, "k", 2);
        rep.cpu_ns = -1;
        rep.rss = -1;
    }
    return dk_xrun_report(r, sb, &rep);
}

int dk_api_exec(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out, const char *nonce)
{
    char exec_id[80];
    int ret = create_exec(e, sb, spec, exec_id);
    if (ret)
        return ret;
    struct dk_xrun r = {.e = e, .spec = spec, .sink = sink, .out = out};
    ret = run_stream(&r, sb, exec_id, nonce);
    free(r.snd);
    return ret;
}
