/* plugins/kubernetes/kube-auth.c - the bearer token of the next request
 *
 * Four sources, as kubectl's: a token written in the kubeconfig, a token
 * file read for every request (the in-cluster service account token is
 * projected and rotates), the ini's `token` credential key (sealed:v1:,
 * env:, file:, opened for the request only), or an exec credential plugin
 * (client.authentication.k8s.io ExecCredential), run when there is no
 * cached token or the cached one expired or was refused (401).  A client
 * certificate needs no header.  The header line is built in memory the
 * caller wipes; no token reaches a log line or a message.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube-int.h"

#define MAX_TOKEN (64u * 1024)
#define PLUGIN_TIMEOUT_MS 60000
/* A cached exec token is renewed this long before it expires. */
#define EXPIRY_SKEW_NS (30ull * 1000000000ull)

extern char **environ;

static int make_line(struct kube_prov *p, const char *tok, size_t tlen, char **line, size_t *len)
{
    while (tlen > 0 && (tok[tlen - 1] == '\n' || tok[tlen - 1] == '\r' || tok[tlen - 1] == ' '))
        tlen--;
    if (tlen == 0 || memchr(tok, '\n', tlen) || memchr(tok, '\r', tlen))
        return p->host->set_error(p->h, SBX_E_CONFIG, "the bearer token of %s is empty or "
                                  "spans lines", p->conn.origin);
    static const char pre[] = "Authorization: Bearer ";
    size_t n = sizeof pre - 1 + tlen + 1;
    char *l = malloc(n);
    if (!l)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    memcpy(l, pre, sizeof pre - 1);
    memcpy(l + sizeof pre - 1, tok, tlen);
    l[n - 1] = '\0';
    *line = l;
    *len = n;
    return SBX_OK;
}

void kube_auth_drop(char *line, size_t len)
{
    if (line) {
        explicit_bzero(line, len);
        free(line);
    }
}

static int token_file(struct kube_prov *p, char **line, size_t *len)
{
    int fd = open(p->conn.token_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return p->host->set_error(p->h, e == EACCES ? SBX_E_PERM : SBX_E_CONFIG,
                                  "token file %s: %s", p->conn.token_file, strerror(e));
    }
    char *buf = malloc(MAX_TOKEN);
    ssize_t got = 0;
    if (buf) {
        for (;;) {
            ssize_t n = read(fd, buf + got, MAX_TOKEN - (size_t)got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += n;
            if ((size_t)got == MAX_TOKEN)
                break;
        }
    }
    close(fd);
    if (!buf)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = make_line(p, buf, (size_t)got, line, len);
    explicit_bzero(buf, MAX_TOKEN);
    free(buf);
    return rc;
}

static int secret_token(struct kube_prov *p, char **line, size_t *len)
{
    const char *tok = NULL;
    size_t tlen = 0;
    int rc = p->host->secret_get(p->h, "token", &tok, &tlen);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_CONFIG, "providers.d/kubernetes.ini sets no "
                                  "token (e.g. token = env:KUBE_TOKEN)");
    if (rc)
        return rc;
    rc = make_line(p, tok, tlen, line, len);
    p->host->secret_release(p->h, tok);
    return rc;
}

/* ---- exec credential plugins ---- */

/* Reads what @fd gives until EOF or the deadline, into a growing buffer. */
static int drain(int fds[2], char *bufs[2], size_t lens[2], size_t cap, int timeout_ms)
{
    size_t caps[2] = {0, 0};
    struct pollfd pf[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    uint64_t end = kube_now_ns() + (uint64_t)timeout_ms * 1000000u;
    int open_n = 2;
    while (open_n > 0) {
        uint64_t now = kube_now_ns();
        if (now >= end)
            return -1;
        int r = poll(pf, 2, (int)((end - now) / 1000000u) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (lens[i] + 4096 + 1 > caps[i]) {
                size_t nc = caps[i] ? caps[i] * 2 : 8192;
                char *nb = lens[i] < cap ? realloc(bufs[i], nc) : NULL;
                if (!nb) {
                    /* Past the cap (or no memory): read and drop. */
                    char sink[4096];
                    ssize_t n = read(pf[i].fd, sink, sizeof sink);
                    if (n <= 0) {
                        pf[i].fd = -1;
                        open_n--;
                    }
                    continue;
                }
                bufs[i] = nb;
                caps[i] = nc;
            }
            ssize_t n = read(pf[i].fd, bufs[i] + lens[i], caps[i] - lens[i] - 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                pf[i].fd = -1;
                open_n--;
                continue;
            }
            lens[i] += (size_t)n;
            bufs[i][lens[i]] = '\0';
        }
    }
    return 0;
}

static void printable(char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = ' ';
}

static int run_plugin(struct kube_prov *p, struct kube_execcred *e)
{
    const char *cmd = e->argv[0];
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    char *info = NULL;
    char **env = NULL;
    int rc = SBX_OK;
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        int en = errno;
        rc = p->host->set_error(p->h, SBX_E_IO, "exec credential plugin %s: pipe: %s", cmd,
                                strerror(en));
        goto done;
    }
    /* Our environment, the plugin's env entries, and KUBERNETES_EXEC_INFO. */
    size_t ne = 0, na = 0;
    while (environ[ne])
        ne++;
    while (e->env[na])
        na++;
    env = calloc(ne + na + 2, sizeof *env);
    if (!env || asprintf(&info, "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":"
                         "\"ExecCredential\",\"spec\":{\"interactive\":false%s%s}}",
                         e->api_version, e->cluster_info ? ",\"cluster\":" : "",
                         e->cluster_info ? e->cluster_info : "") < 0) {
        info = NULL;
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21))
            env[k++] = environ[i];
    for (size_t i = 0; i < na; i++)
        env[k++] = e->env[i];
    env[k++] = info;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int sr = strchr(cmd, '/') ? posix_spawn(&pid, cmd, &fa, &at, e->argv, env)
                              : posix_spawnp(&pid, cmd, &fa, &at, e->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(out[1]);
    close(err[1]);
    out[1] = err[1] = -1;
    if (sr != 0) {
        rc = p->host->set_error(p->h, SBX_E_CONFIG, "exec credential plugin '%s' of %s cannot "
                                "be run: %s", cmd, p->conn.origin, strerror(sr));
        goto done;
    }
    int fds[2] = {out[0], err[0]};
    char *bufs[2] = {NULL, NULL};
    size_t lens[2] = {0, 0};
    int dr = drain(fds, bufs, lens, 1u << 20, PLUGIN_TIMEOUT_MS);
    if (dr < 0)
        kill(-pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    printable(bufs[1]);
    if (dr < 0) {
        rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "exec credential plugin '%s' gave no "
                                "answer in %d s", cmd, PLUGIN_TIMEOUT_MS / 1000);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        rc = p->host->set_error(p->h, SBX_E_AUTH, "exec credential plugin '%s' failed (%s %d): "
                                "%.300s", cmd, WIFEXITED(st) ? "exit" : "signal",
                                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                                bufs[1] ? bufs[1] : "");
    } else {
        json_error_t je;
        json_t *j = bufs[0] ? json_loadb(bufs[0], lens[0], 0, &je) : NULL;
        const char *av = json_string_value(json_object_get(j, "apiVersion"));
        json_t *status = json_object_get(j, "status");
        const char *tok = json_string_value(json_object_get(status, "token"));
        const char *exp = json_string_value(json_object_get(status, "expirationTimestamp"));
        if (!j || !av || strcmp(av, e->api_version))
            rc = p->host->set_error(p->h, SBX_E_AUTH, "exec credential plugin '%s' did not "
                                    "answer an ExecCredential of %s", cmd, e->api_version);
        else if (!tok || !*tok)
            rc = p->host->set_error(p->h, SBX_E_AUTH, "exec credential plugin '%s' gave no "
                                    "token (client certificates from plugins are not "
                                    "supported)", cmd);
        else {
            char *copy = strdup(tok);
            if (!copy) {
                rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            } else {
                if (e->token) {
                    explicit_bzero(e->token, strlen(e->token));
                    free(e->token);
                }
                e->token = copy;
                e->expires_ns = exp ? pc_rfc3339_ns(exp) : 0;
            }
        }
        json_decref(j);
    }
    for (int i = 0; i < 2; i++) {
        if (bufs[i]) {
            explicit_bzero(bufs[i], lens[i]);
            free(bufs[i]);
        }
    }
done:
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    free(env);
    free(info);
    return rc;
}

static int exec_token(struct kube_prov *p, char **line, size_t *len)
{
    struct kube_execcred *e = p->conn.exec;
    int rc = SBX_OK;
    pthread_mutex_lock(&e->lock);
    if (!e->token || (e->expires_ns && kube_wall_ns() + EXPIRY_SKEW_NS >= e->expires_ns))
        rc = run_plugin(p, e);
    if (rc == SBX_OK)
        rc = make_line(p, e->token, strlen(e->token), line, len);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

int kube_auth_header(struct kube_prov *p, char **line, size_t *len)
{
    *line = NULL;
    *len = 0;
    switch (p->conn.auth) {
    case KUBE_AUTH_NONE: return SBX_OK;
    case KUBE_AUTH_TOKEN: return make_line(p, p->conn.token, strlen(p->conn.token), line, len);
    case KUBE_AUTH_TOKEN_FILE: return token_file(p, line, len);
    case KUBE_AUTH_SECRET: return secret_token(p, line, len);
    case KUBE_AUTH_EXEC: return exec_token(p, line, len);
    }
    return SBX_OK;
}

bool kube_auth_invalidate(struct kube_prov *p)
{
    struct kube_execcred *e = p->conn.exec;
    bool had = false;
    if (p->conn.auth != KUBE_AUTH_EXEC || !e)
        return false;
    pthread_mutex_lock(&e->lock);
    if (e->token) {
        explicit_bzero(e->token, strlen(e->token));
        free(e->token);
        e->token = NULL;
        had = true;
    }
    pthread_mutex_unlock(&e->lock);
    return had;
}
