/* tests/fuzz/canned.c - raw HTTP answers from 127.0.0.1 (see canned.h) */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "canned.h"

#define HEAD_MAX 65536
#define BODY_MAX (64u << 20)

static const char no_more[] =
    "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
    "Content-Length: 31\r\nConnection: close\r\n\r\n{\"message\":\"no more answers\"}\r\n";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int busy;
static fz_part *answers;
static size_t n_answers, served;
static char url[64];

static void die(const char *what)
{
    fprintf(stderr, "fuzz: canned server: %s: %s\n", what, strerror(errno));
    abort();
}

/* Reads the request's head and its Content-Length body; 0 when whole.
 * With $SBX_FUZZ_TRACE set, its first line goes to stderr (for writing
 * seeds: which request gets which answer). */
static int read_request(int fd)
{
    char *head = fz_xmalloc(HEAD_MAX + 1);
    size_t len = 0, body = 0, have;
    char *end = NULL;

    while (!end) {
        ssize_t n;
        if (len == HEAD_MAX) {
            free(head);
            return -1;
        }
        n = recv(fd, head + len, HEAD_MAX - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(head);
            return -1;
        }
        len += (size_t)n;
        head[len] = '\0';
        end = strstr(head, "\r\n\r\n");
    }
    for (char *l = strstr(head, "\r\n"); l && l < end; l = strstr(l + 2, "\r\n"))
        if (!strncasecmp(l + 2, "Content-Length:", 15))
            body = strtoul(l + 17, NULL, 10);
    have = len - (size_t)(end + 4 - head);
    if (getenv("SBX_FUZZ_TRACE"))
        fprintf(stderr, "canned: request %zu: %.*s\n", served, (int)strcspn(head, "\r\n"), head);
    free(head);
    if (body > BODY_MAX)
        return -1;
    while (have < body) {
        char buf[16384];
        size_t want = body - have < sizeof buf ? body - have : sizeof buf;
        ssize_t n = recv(fd, buf, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    return 0;
}

static void send_all(int fd, const void *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;     /* the client left: nothing to do */
        p = (const char *)p + n;
        len -= (size_t)n;
    }
}

static void *serve(void *arg)
{
    int lfd = *(int *)arg;

    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        struct timeval tv = { 2, 0 };

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            die("accept");
        }
        pthread_mutex_lock(&lock);
        busy = 1;
        pthread_mutex_unlock(&lock);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (read_request(fd) == 0) {
            const void *p;
            size_t len;
            pthread_mutex_lock(&lock);
            if (served < n_answers) {
                p = answers[served].p;
                len = answers[served].len;
            } else {
                p = no_more;
                len = sizeof no_more - 1;
            }
            served++;
            pthread_mutex_unlock(&lock);
            /* The answers stay put while busy (fz_canned_set waits). */
            send_all(fd, p, len);
            shutdown(fd, SHUT_WR);
        }
        close(fd);
        pthread_mutex_lock(&lock);
        busy = 0;
        pthread_cond_broadcast(&idle_cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

const char *fz_canned_url(void)
{
    static int lfd = -1;
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t sl = sizeof sa;
    pthread_t t;
    pthread_attr_t attr;

    if (lfd >= 0)
        return url;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        die("socket");
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 64) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0)
        die("bind 127.0.0.1");
    snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if ((errno = pthread_create(&t, &attr, serve, &lfd)) != 0)
        die("pthread_create");
    pthread_attr_destroy(&attr);
    return url;
}

void fz_canned_set(const fz_part *parts, size_t n)
{
    fz_part *copy = n ? fz_xmalloc(n * sizeof *copy) : NULL;
    fz_part *old;
    size_t n_old;

    for (size_t i = 0; i < n; i++) {
        uint8_t *p = fz_xmalloc(parts[i].len);
        if (parts[i].len)
            memcpy(p, parts[i].p, parts[i].len);
        copy[i] = (fz_part){ p, parts[i].len };
    }
    pthread_mutex_lock(&lock);
    while (busy)
        pthread_cond_wait(&idle_cond, &lock);
    old = answers;
    n_old = n_answers;
    answers = copy;
    n_answers = n;
    served = 0;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n_old; i++)
        free((void *)old[i].p);
    free(old);
}

int fz_canned_next(fz_part *out)
{
    int got;

    pthread_mutex_lock(&lock);
    got = served < n_answers;
    if (got)
        *out = answers[served++];
    pthread_mutex_unlock(&lock);
    return got;
}

size_t fz_canned_served(void)
{
    size_t n;

    pthread_mutex_lock(&lock);
    n = served;
    pthread_mutex_unlock(&lock);
    return n;
}

int fz_canned_holds(const char *s)
{
    size_t sl = strlen(s);
    int found = 0;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_answers && !found; i++)
        found = sl && answers[i].len >= sl && memmem(answers[i].p, answers[i].len, s, sl);
    pthread_mutex_unlock(&lock);
    return found;
}
