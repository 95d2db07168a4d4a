/* core/server/log.c - one line per event on stderr, tagged with the
 * request id
 *
 * Each line is built first and written with one write(2), so lines from
 * many threads never interleave.  journald or the service manager adds
 * the time.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

uint64_t srv_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void srv_log(const srv_req *r, const char *fmt, ...)
{
    char line[1024];
    size_t n;
    va_list ap;
    int k;

    k = r ? snprintf(line, sizeof line, "polysandboxd: [%s] ", r->rid)
          : snprintf(line, sizeof line, "polysandboxd: ");
    n = k > 0 ? (size_t)k : 0;
    va_start(ap, fmt);
    k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (k > 0)
        n += (size_t)k < sizeof line - n - 1 ? (size_t)k : sizeof line - n - 2;
    /* Nothing a client sent may break the line in two. */
    for (size_t i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, n) < 0) {
        /* stderr is gone: nothing better to do */
    }
}
