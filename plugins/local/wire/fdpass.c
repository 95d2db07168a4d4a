/* plugins/local/wire/fdpass.c - framing of the daemon's messages
 *
 * Stream sockets: a message may take several reads; descriptors ride on
 * the first byte.  Used by the provider, the daemon and the prepared
 * sandboxes (the last after fork, single-threaded: plain calls only).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

#define MAX_FDS 8

int lcl_fds_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
    const char *p = buf;
    size_t off = 0;
    union {
        char b[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } u;
    if (nfds > MAX_FDS || len == 0)
        return -EINVAL;
    while (off < len) {
        struct iovec io = {(void *)(p + off), len - off};
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        if (off == 0 && nfds > 0) {
            memset(&u, 0, sizeof u);
            m.msg_control = u.b;
            m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
            memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
        }
        ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        off += (size_t)n;
    }
    return 0;
}

int lcl_fds_recv(int sock, void *buf, size_t len, int *fds, int nfds)
{
    char *p = buf;
    size_t off = 0;
    union {
        char b[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } u;
    for (int i = 0; i < nfds; i++)
        fds[i] = -1;
    while (off < len) {
        struct iovec io = {p + off, len - off};
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        m.msg_control = u.b;
        m.msg_controllen = sizeof u.b;
        ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                int slot = -1;
                for (int j = 0; j < nfds && slot < 0; j++)
                    if (fds[j] < 0)
                        slot = j;
                if (slot >= 0)
                    fds[slot] = fd;
                else
                    close(fd);
            }
        }
        if (m.msg_flags & MSG_CTRUNC)
            return -EMSGSIZE;
        if (n == 0)
            return -EPIPE;
        off += (size_t)n;
    }
    return 0;
}
