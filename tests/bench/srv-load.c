/* tests/bench/srv-load.c - a small HTTP/1.1 load client: N keep-alive
 * clients, each sending one request after the other
 *
 * Usage: srv-load [-c CLIENTS] [-n REQUESTS | -d SECONDS] [-w WARMUP]
 *                 [-H 'NAME: VALUE']... [-e EXPECT] [-m FIELD] [-l LABEL]
 *                 [--save KEY] http://127.0.0.1:PORT/PATH [BODY]
 *
 * Every client is a thread with its own connection (opened before the
 * clock starts, TCP_NODELAY, kept alive); with BODY it POSTs it as
 * application/json, else it GETs.  After WARMUP requests (all clients
 * together, not measured) it sends REQUESTS in all, or as many as the
 * clients start in SECONDS (-d: the rate counts those finished in time;
 * the latencies are those of every request started in time, the ones
 * finished after it included, so that slow requests are not left out
 * of the percentiles).  Prints the
 * rate, the latency of one request (p50, p90, p99, max), and the answers
 * that were not 2xx, whose body lacks EXPECT, or that failed (connection
 * errors; a connection the server closes is opened again and counted).
 * -m FIELD: each reply holds "FIELD":NANOSECONDS, the time the server
 * spent on the work itself (POST /v1/run's timings_ns.total); what is
 * left of a request's latency without it is what the server added to
 * the work, paired request by request (its median is printed).
 * --save KEY appends KEY.rate, .p50, .p90, .p99, .non2xx, .unexpected,
 * .errors and .reconnects (and .outside, with -m) to the file
 * $BENCH_SAVE names.
 *
 * A benchmark tool: it asserts nothing about speed.  Exits 1 when a
 * request failed or was answered otherwise than expected, 2 on bad usage.
 * Only loopback addresses are accepted.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 1024
#define MAX_HEADERS 16
#define RESP_MAX (1u << 20)      /* a reply larger than this is an error */
#define IO_TIMEOUT_S 120

struct load {
    struct sockaddr_in addr;
    char *request;               /* the whole request, sent as is */
    size_t request_len;
    const char *expect;
    const char *minus;           /* "\"FIELD\":" (-m) or NULL */
    long warmup, total;          /* total < 0: until the deadline */
    uint64_t deadline_ns;        /* set when the clock starts */
    atomic_long next;            /* next request number to take */
    atomic_long timed_done;
    atomic_long non2xx, unexpected, errors, reconnects;
    atomic_int reported;         /* the first bad answer was printed */
    pthread_barrier_t ready;     /* connected, warmed up */
    pthread_barrier_t go;
    uint64_t t0;
};

struct client {
    struct load *L;
    int fd;
    char *buf;                   /* the reply being read */
    size_t len;
    uint64_t *lat;               /* the latencies of its timed requests */
    uint64_t *outside;           /* ... less the -m field of each */
    size_t n_lat, cap_lat;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The first bad answer is shown: @what, then @detail. */
static void report(struct load *L, const char *what, const char *detail)
{
    if (atomic_exchange(&L->reported, 1) == 0)
        fprintf(stderr, "srv-load: %s%s\n", what, detail);
}

static int dial(struct client *c)
{
    struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
    int one = 1;

    if (c->fd >= 0)
        close(c->fd);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
        connect(c->fd, (const struct sockaddr *)&c->L->addr, sizeof c->L->addr) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

/* The value of header @name in the head @h (NUL-terminated), or NULL. */
static const char *header(const char *h, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = strstr(h, "\r\n"); p; p = strstr(p, "\r\n")) {
        p += 2;
        if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
            p += n + 1;
            while (*p == ' ' || *p == '\t')
                p++;
            return p;
        }
    }
    return NULL;
}

/* One request and its reply: the status (0: the connection failed or the
 * reply is not one this client reads), *closes when the server will close
 * the connection after it.  The body is c->buf + *body_off. */
static int exchange(struct client *c, size_t *body_off, bool *closes)
{
    struct load *L = c->L;
    size_t sent = 0, head_end = 0, want = 0;
    int status = 0;

    while (sent < L->request_len) {
        ssize_t w = send(c->fd, L->request + sent, L->request_len - sent, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return 0;
        }
        sent += (size_t)w;
    }
    c->len = 0;
    for (;;) {
        if (c->len == RESP_MAX)
            return 0;
        ssize_t r = recv(c->fd, c->buf + c->len, RESP_MAX - c->len, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return 0;
        }
        c->len += (size_t)r;
        if (!head_end) {
            char *e = memmem(c->buf, c->len, "\r\n\r\n", 4);
            if (!e)
                continue;
            head_end = (size_t)(e - c->buf) + 4;
            e[2] = '\0';   /* the head as a string (its last CRLF kept) */
            const char *cl = header(c->buf, "Content-Length"), *co = header(c->buf, "Connection");
            if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1 || !cl ||
                header(c->buf, "Transfer-Encoding"))
                return 0;   /* chunked replies are not what this measures */
            char *end;
            unsigned long long n = strtoull(cl, &end, 10);
            if (end == cl || n > RESP_MAX - head_end)
                return 0;
            want = head_end + (size_t)n;
            *closes = co && strncasecmp(co, "close", 5) == 0;
        }
        if (c->len >= want)
            break;
    }
    if (c->len > want)
        return 0;   /* bytes past the reply: not a client of one request at a time */
    c->buf[want < RESP_MAX ? want : RESP_MAX - 1] = '\0';
    *body_off = head_end;
    return status;
}

static bool lat_push(struct client *c, uint64_t ns, uint64_t outside)
{
    if (c->n_lat == c->cap_lat) {
        size_t cap = c->cap_lat ? c->cap_lat * 2 : 4096;
        uint64_t *v = realloc(c->lat, cap * sizeof *v);
        if (!v)
            return false;
        c->lat = v;
        if (!(v = realloc(c->outside, cap * sizeof *v)))
            return false;
        c->outside = v;
        c->cap_lat = cap;
    }
    c->outside[c->n_lat] = outside;
    c->lat[c->n_lat++] = ns;
    return true;
}

/* The latency @ns less the -m field of the reply @body; false when the
 * reply has no such number. */
static bool outside_of(const struct load *L, const char *body, uint64_t ns, uint64_t *out)
{
    const char *p = L->minus ? strstr(body, L->minus) : NULL;
    char *end;

    *out = 0;
    if (!L->minus)
        return true;
    if (!p)
        return false;
    p += strlen(L->minus);
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || end == p)
        return false;
    *out = ns > v ? ns - v : 0;
    return true;
}

/* Request number @i: send it, read and check the reply, time it when
 * @timed. */
static void one(struct client *c, bool timed)
{
    struct load *L = c->L;
    size_t off = 0;
    bool closes = false;
    uint64_t t0 = now_ns();
    int status = c->fd >= 0 ? exchange(c, &off, &closes) : 0;
    uint64_t t1 = now_ns();

    if (status == 0) {
        atomic_fetch_add(&L->errors, 1);
        report(L, "a request failed (connection error, timeout or a reply without "
               "Content-Length)", "");
        dial(c);
        return;
    }
    uint64_t outside = 0;
    if (status < 200 || status > 299) {
        atomic_fetch_add(&L->non2xx, 1);
        report(L, "answered ", c->buf);
    } else if ((L->expect && !strstr(c->buf + off, L->expect)) ||
               !outside_of(L, c->buf + off, t1 - t0, &outside)) {
        atomic_fetch_add(&L->unexpected, 1);
        report(L, "a reply without the expected text or -m field: ", c->buf + off);
    }
    if (timed) {
        if (t1 <= L->deadline_ns)
            atomic_fetch_add(&L->timed_done, 1);
        if (!lat_push(c, t1 - t0, outside))
            atomic_fetch_add(&L->errors, 1);
    }
    if (closes) {
        atomic_fetch_add(&L->reconnects, 1);
        dial(c);
    }
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct load *L = c->L;

    if (dial(c) != 0)
        report(L, "cannot connect: ", strerror(errno));
    for (;;) {
        long i = atomic_fetch_add(&L->next, 1);
        if (i >= L->warmup)
            break;
        one(c, false);
    }
    pthread_barrier_wait(&L->ready);
    pthread_barrier_wait(&L->go);
    for (;;) {
        if (L->total >= 0) {
            if (atomic_fetch_add(&L->next, 1) >= L->total)
                break;
        } else if (now_ns() >= L->deadline_ns) {
            break;
        }
        one(c, true);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void save(const char *key, const char *what, double v)
{
    const char *path = getenv("BENCH_SAVE");
    FILE *f;

    if (!key || !path || !*path)
        return;
    if (!(f = fopen(path, "ae"))) {
        fprintf(stderr, "srv-load: BENCH_SAVE %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "%s.%s=%.3f\n", key, what, v);
    fclose(f);
}

static void usage(void)
{
    fprintf(stderr, "usage: srv-load [-c CLIENTS] [-n REQUESTS | -d SECONDS] [-w WARMUP] "
            "[-H 'NAME: VALUE']... [-e EXPECT] [-m FIELD] [-l LABEL] [--save KEY] "
            "http://127.0.0.1:PORT/PATH [BODY]\n");
    exit(2);
}

static long number(const char *s, const char *opt, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "srv-load: %s: '%s' is not a number from %ld to %ld\n", opt, s, lo, hi);
        exit(2);
    }
    return v;
}

/* "http://A.B.C.D:PORT/PATH" with a loopback address into @L->addr; the
 * path is returned (borrowed from @url). */
static const char *parse_url(struct load *L, const char *url)
{
    char host[64];
    const char *p, *colon, *path;

    if (strncmp(url, "http://", 7) != 0)
        return NULL;
    p = url + 7;
    if (!(colon = strchr(p, ':')) || (size_t)(colon - p) >= sizeof host)
        return NULL;
    memcpy(host, p, (size_t)(colon - p));
    host[colon - p] = '\0';
    path = strchr(colon, '/');
    char port[8];
    size_t pl = path ? (size_t)(path - colon - 1) : strlen(colon + 1);
    if (pl == 0 || pl >= sizeof port)
        return NULL;
    memcpy(port, colon + 1, pl);
    port[pl] = '\0';
    L->addr.sin_family = AF_INET;
    L->addr.sin_port = htons((uint16_t)number(port, "the URL's port", 1, 65535));
    if (inet_pton(AF_INET, host, &L->addr.sin_addr) != 1 ||
        (ntohl(L->addr.sin_addr.s_addr) >> 24) != 127)
        return NULL;
    return path ? path : "/";
}

int main(int argc, char **argv)
{
    struct load L;
    const char *headers[MAX_HEADERS], *label = NULL, *key = NULL, *url = NULL, *body = NULL,
               *minus = NULL;
    size_t n_headers = 0;
    long clients = 1;
    double seconds = 0;
    struct client *cs = NULL;
    pthread_t *tid = NULL;
    int ret = 1;

    memset(&L, 0, sizeof L);
    L.total = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-c") && i + 1 < argc)
            clients = number(argv[++i], "-c", 1, MAX_CLIENTS);
        else if (!strcmp(a, "-n") && i + 1 < argc)
            L.total = number(argv[++i], "-n", 1, 100000000);
        else if (!strcmp(a, "-d") && i + 1 < argc)
            seconds = (double)number(argv[++i], "-d", 1, 86400);
        else if (!strcmp(a, "-w") && i + 1 < argc)
            L.warmup = number(argv[++i], "-w", 0, 100000000);
        else if (!strcmp(a, "-H") && i + 1 < argc && n_headers < MAX_HEADERS)
            headers[n_headers++] = argv[++i];
        else if (!strcmp(a, "-e") && i + 1 < argc)
            L.expect = argv[++i];
        else if (!strcmp(a, "-m") && i + 1 < argc)
            minus = argv[++i];
        else if (!strcmp(a, "-l") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(a, "--save") && i + 1 < argc)
            key = argv[++i];
        else if (a[0] == '-')
            usage();
        else if (!url)
            url = a;
        else if (!body)
            body = a;
        else
            usage();
    }
    if (!url || (L.total < 0) == (seconds == 0))
        usage();   /* exactly one of -n and -d */
    const char *path = parse_url(&L, url);
    if (!path) {
        fprintf(stderr, "srv-load: %s: expected http://127.X.Y.Z:PORT/PATH (loopback only)\n",
                url);
        return 2;
    }

    if (minus) {
        size_t ml = strlen(minus) + 4;
        char *m = malloc(ml);
        if (!m)
            goto oom;
        snprintf(m, ml, "\"%s\":", minus);
        L.minus = m;
    }
    /* The request, built once. */
    size_t cap = strlen(path) + (body ? strlen(body) : 0) + 256;
    for (size_t i = 0; i < n_headers; i++)
        cap += strlen(headers[i]) + 2;
    if (!(L.request = malloc(cap)))
        goto oom;
    int n = snprintf(L.request, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n", body ? "POST" : "GET",
                     path, inet_ntoa(L.addr.sin_addr));
    for (size_t i = 0; i < n_headers; i++)
        n += snprintf(L.request + n, cap - (size_t)n, "%s\r\n", headers[i]);
    if (body)
        n += snprintf(L.request + n, cap - (size_t)n, "Content-Type: application/json\r\n"
                      "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
    else
        n += snprintf(L.request + n, cap - (size_t)n, "\r\n");
    L.request_len = (size_t)n;

    if (!(cs = calloc((size_t)clients, sizeof *cs)) ||
        !(tid = calloc((size_t)clients, sizeof *tid)))
        goto oom;
    pthread_barrier_init(&L.ready, NULL, (unsigned)clients + 1);
    pthread_barrier_init(&L.go, NULL, (unsigned)clients + 1);
    long started = 0;
    for (; started < clients; started++) {
        cs[started].L = &L;
        cs[started].fd = -1;
        if (!(cs[started].buf = malloc(RESP_MAX)))
            goto oom;
        int e = pthread_create(&tid[started], NULL, client_main, &cs[started]);
        if (e) {
            fprintf(stderr, "srv-load: pthread_create: %s\n", strerror(e));
            return 1;   /* threads wait at the barrier: nothing to clean up */
        }
    }
    pthread_barrier_wait(&L.ready);
    atomic_store(&L.next, 0);
    L.t0 = now_ns();
    L.deadline_ns = L.total >= 0 ? UINT64_MAX : L.t0 + (uint64_t)(seconds * 1e9);
    pthread_barrier_wait(&L.go);
    for (long i = 0; i < clients; i++)
        pthread_join(tid[i], NULL);
    uint64_t t1 = now_ns();
    double secs = L.total >= 0 ? (double)(t1 - L.t0) / 1e9 : seconds;

    size_t n_lat = 0;
    for (long i = 0; i < clients; i++)
        n_lat += cs[i].n_lat;
    uint64_t *lat = malloc((n_lat ? n_lat : 1) * sizeof *lat),
             *outside = malloc((n_lat ? n_lat : 1) * sizeof *outside);
    if (!lat || !outside)
        goto oom;
    n_lat = 0;
    for (long i = 0; i < clients; i++) {
        memcpy(lat + n_lat, cs[i].lat, cs[i].n_lat * sizeof *lat);
        memcpy(outside + n_lat, cs[i].outside, cs[i].n_lat * sizeof *outside);
        n_lat += cs[i].n_lat;
    }
    qsort(lat, n_lat, sizeof *lat, cmp_u64);
    qsort(outside, n_lat, sizeof *outside, cmp_u64);
#define PCT(p) (n_lat ? (double)lat[(size_t)((double)(n_lat - 1) * (p))] / 1e6 : 0.0)
    double rate = (double)atomic_load(&L.timed_done) / secs;
    long non2xx = atomic_load(&L.non2xx), unexpected = atomic_load(&L.unexpected),
         errors = atomic_load(&L.errors), reconnects = atomic_load(&L.reconnects);
    printf("%-28s c=%-3ld %6ld in %6.2f s = %7.1f req/s   latency p50 %7.2f  p90 %7.2f  "
           "p99 %7.2f  max %7.2f ms   non-2xx %ld%s%s\n",
           label ? label : path, clients, atomic_load(&L.timed_done), secs, rate, PCT(0.5),
           PCT(0.9), PCT(0.99), n_lat ? (double)lat[n_lat - 1] / 1e6 : 0.0, non2xx,
           unexpected || errors ? "  UNEXPECTED OR FAILED" : "",
           reconnects ? "  (the server closed connections)" : "");
    save(key, "rate", rate);
    save(key, "p50", PCT(0.5));
    save(key, "p90", PCT(0.9));
    save(key, "p99", PCT(0.99));
    save(key, "non2xx", (double)non2xx);
    save(key, "unexpected", (double)unexpected);
    save(key, "errors", (double)errors);
    save(key, "reconnects", (double)reconnects);
    if (L.minus && n_lat) {
        double med = (double)outside[(n_lat - 1) / 2] / 1e6;
        printf("%-28s       latency less \"%s\": median %.3f ms (what the server added)\n",
               "", minus, med);
        save(key, "outside", med);
    }
    ret = non2xx || unexpected || errors ? 1 : 0;
    free(lat);
    free(outside);
    for (long i = 0; i < clients; i++) {
        if (cs[i].fd >= 0)
            close(cs[i].fd);
        free(cs[i].buf);
        free(cs[i].lat);
        free(cs[i].outside);
    }
    pthread_barrier_destroy(&L.ready);
    pthread_barrier_destroy(&L.go);
    free(cs);
    free(tid);
    free(L.request);
    free((char *)L.minus);
    return ret;
oom:
    fprintf(stderr, "srv-load: out of memory\n");
    return 1;
}
