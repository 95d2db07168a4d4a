/* core/cli/eval-progress.c - progress of an evaluation on stderr: a bar
 * redrawn in place on a terminal, a plain line per tenth otherwise */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "eval-cli.h"

struct cli_progress {
    const char *label;
    bool quiet, tty, drawn;
    uint64_t t0, last_draw;
    size_t first_done;        /* done at the first call minus one: resumed work */
    bool started;
    unsigned last_tenth;
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

cli_progress *cli_progress_new(const char *label, bool quiet)
{
    cli_progress *p = calloc(1, sizeof *p);

    if (!p)
        return NULL;
    p->label = label;
    p->quiet = quiet;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->t0 = now_ns();
    return p;
}

int cli_progress_cb(void *ud, const sbx_eval_record *rec, size_t done, size_t total,
                    size_t passed)
{
    cli_progress *p = ud;
    uint64_t now = now_ns();
    double secs, rate, eta;
    size_t ran;
    unsigned tenth;

    (void)rec;
    if (!p || p->quiet)
        return 0;
    if (!p->started) {
        p->started = true;
        p->first_done = done - 1;
    }
    ran = done - p->first_done;
    secs = (double)(now - p->t0) / 1e9;
    rate = secs > 0 ? (double)ran / secs : 0.0;
    eta = rate > 0 ? (double)(total - done) / rate : 0.0;
    if (p->tty) {
        char bar[31];
        size_t fill = total ? done * 30 / total : 30;
        if (done != total && now - p->last_draw < 100000000u)
            return 0;
        p->last_draw = now;
        for (size_t i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r%s [%s] %zu/%zu %.1f/s ETA %.0fs pass %.1f%%  ", p->label, bar,
                done, total, rate, eta, done ? 100.0 * (double)passed / (double)done : 0.0);
        p->drawn = true;
        return 0;
    }
    tenth = total ? (unsigned)(done * 10 / total) : 10;
    if (tenth == p->last_tenth && done != total)
        return 0;
    if (tenth == p->last_tenth)
        return 0;
    p->last_tenth = tenth;
    fprintf(stderr, "%s: %zu/%zu done, %.1f/s, ETA %.0fs, pass %.1f%%\n", p->label, done,
            total, rate, eta, done ? 100.0 * (double)passed / (double)done : 0.0);
    return 0;
}

void cli_progress_free(cli_progress *p)
{
    if (!p)
        return;
    if (p->drawn)
        fputc('\n', stderr);
    free(p);
}
