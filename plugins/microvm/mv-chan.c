/* plugins/microvm/mv-chan.c - frames to and from the guest agent
 *
 * Every byte read here comes from the guest and is hostile: a header is
 * checked (mv_hdr_parse) before its length is believed, a payload is read
 * into a buffer of exactly that length, and no read waits past the
 * caller's deadline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

int64_t mv_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(struct mv_prov *p, int fd, const void *buf, size_t len)
{
    const uint8_t *b = buf;

    while (len) {
        /* MSG_NOSIGNAL: a VM that died must not take us with it (SIGPIPE). */
        ssize_t n = send(fd, b, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: writing to the agent: %s",
                                      n < 0 ? strerror(errno) : "closed");
        b += n;
        len -= (size_t)n;
    }
    return SBX_OK;
}

int mv_chan_send(struct mv_prov *p, int fd, uint8_t type, const void *a, size_t alen,
                 const void *b, size_t blen)
{
    uint8_t h[MV_HDR_LEN];
    int rc;

    if (alen + blen > MV_MAX_PAYLOAD)
        return p->host->set_error(p->h, SBX_E_LIMIT,
                                  "microvm: a message of %zu bytes is over the agent's %u",
                                  alen + blen, MV_MAX_PAYLOAD);
    mv_hdr_put(h, type, (uint32_t)(alen + blen));
    if ((rc = write_all(p, fd, h, sizeof h)) || (alen && (rc = write_all(p, fd, a, alen))) ||
        (blen && (rc = write_all(p, fd, b, blen))))
        return rc;
    return SBX_OK;
}

/* (@stop: NULL, or a cancel_fd to watch: see struct mv_stop) */
static int read_all(struct mv_prov *p, int fd, int64_t deadline, struct mv_stop *stop, void *buf,
                    size_t len)
{
    uint8_t *b = buf;

    while (len) {
        int64_t until = stop && stop->until && (!deadline || stop->until < deadline)
                            ? stop->until
                            : deadline;
        int64_t left = until ? until - mv_now_ms() : -1;
        struct pollfd pfd[2] = {{fd, POLLIN, 0},
                                {stop && !stop->until ? stop->fd : -1, POLLIN, 0}};
        if (until && left <= 0)
            return p->host->set_error(p->h, SBX_E_TIMEOUT, "microvm: the agent did not answer in time");
        int r = poll(pfd, 2, left > 0x7fffffff ? 0x7fffffff : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return p->host->set_error(p->h, SBX_E_IO, "microvm: poll: %s", strerror(errno));
        /* Stopped: the frame still ends whole (the caller kills the
         * command), but a guest stalling in it is waited for no longer
         * than the grace. */
        if (stop && pfd[1].revents)
            stop->until = mv_now_ms() + stop->grace_ms;
        if (!pfd[0].revents)
            continue;
        ssize_t n = read(fd, b, len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the agent's channel %s",
                                      n < 0 ? strerror(errno) : "closed (the VM stopped)");
        b += n;
        len -= (size_t)n;
    }
    return SBX_OK;
}

static int recv_frame(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_stop *stop,
                      struct mv_hdr *hd, uint8_t **payload, int *answered)
{
    uint8_t h[MV_HDR_LEN];
    const char *why;
    int rc;

    *payload = NULL;
    if ((rc = read_all(p, fd, deadline_ms, stop, h, sizeof h)))
        return rc;
    if (answered)
        *answered = 1;
    int bad = mv_hdr_parse(h, 1, hd, &why);
    if (bad == MV_HDR_VERSION)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: the guest agent speaks protocol version %u, this "
                                  "provider %u: rebuild the guest image with "
                                  "polysandbox-microvm-image", h[1], MV_PROTO_VERSION);
    if (bad)
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the agent broke the protocol: %s",
                                  why);
    uint8_t *b = malloc((size_t)hd->len + 1);
    if (!b)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (hd->len && (rc = read_all(p, fd, deadline_ms, stop, b, hd->len))) {
        free(b);
        return rc;
    }
    b[hd->len] = '\0';
    *payload = b;
    return SBX_OK;
}

int mv_chan_recv(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hdr *hd,
                 uint8_t **payload)
{
    return recv_frame(p, fd, deadline_ms, NULL, hd, payload, NULL);
}

int mv_chan_recv_stop(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_stop *stop,
                      struct mv_hdr *hd, uint8_t **payload)
{
    return recv_frame(p, fd, deadline_ms, stop, hd, payload, NULL);
}

int mv_chan_quiet(struct mv_prov *p, int fd)
{
    struct pollfd pf = { fd, POLLIN, 0 };
    char c;

    if (poll(&pf, 1, 0) <= 0)
        return SBX_OK;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return SBX_OK;
    if (n <= 0)
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the agent's channel %s",
                                  n < 0 ? strerror(errno) : "closed (the VM stopped)");
    return p->host->set_error(p->h, SBX_E_BACKEND,
                              "microvm: the guest agent broke the protocol: a frame nothing "
                              "asked for (after the last exec's end)");
}

int mv_chan_hello(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hello *hl,
                  int *answered)
{
    struct mv_hdr hd;
    uint8_t *pl = NULL;
    const char *why;
    int rc;

    *answered = 0;
    if ((rc = recv_frame(p, fd, deadline_ms, NULL, &hd, &pl, answered)))
        return rc;
    if (hd.type != MV_T_HELLO || mv_hello_decode(pl, hd.len, hl, &why))
        rc = p->host->set_error(p->h, SBX_E_BACKEND,
                                "microvm: the guest agent's first frame is not a valid hello");
    free(pl);
    return rc;
}

int mv_chan_error(struct mv_prov *p, const char *what, const uint8_t *pl, size_t len)
{
    static const int codes[] = {
        [MV_ERR_OTHER] = SBX_E_BACKEND, [MV_ERR_NOENT] = SBX_E_NOT_FOUND,
        [MV_ERR_PATH] = SBX_E_PATH, [MV_ERR_NOTFILE] = SBX_E_PATH,
        [MV_ERR_TOOBIG] = SBX_E_LIMIT,
    };
    char text[301];
    const uint8_t *msg;
    size_t n, j;
    uint32_t code;
    const char *why;

    if (mv_error_decode(pl, len, &code, &msg, &n, &why))
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: %s: %s", what, why);
    for (j = 0; j < n && j + 1 < sizeof text; j++)
        text[j] = (msg[j] >= 0x20 && msg[j] < 0x7f) ? (char)msg[j] : '?';
    text[j] = '\0';
    return p->host->set_error(p->h, codes[code], "microvm: %s: the guest agent: %s", what, text);
}
