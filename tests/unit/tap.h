/* tests/unit/tap.h - a few lines of TAP for the unit tests
 *
 * ok(cond, "what") prints "ok N - what" or "not ok N - what"; tap_done()
 * prints the plan and gives the exit status (non-zero when any failed);
 * tap_write_file() writes a test's input files.
 */
#ifndef POLYSANDBOX_TESTS_TAP_H
#define POLYSANDBOX_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count;
static int tap_failed;

__attribute__((format(printf, 2, 3), unused))
static int ok(int cond, const char *fmt, ...)
{
    va_list ap;

    tap_count++;
    if (!cond)
        tap_failed++;
    printf("%sok %d - ", cond ? "" : "not ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

/* A diagnostic line, shown by the driver in the log. */
__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
    va_list ap;

    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* Write @text to @path (made or replaced); 0, or -1 with errno set. */
__attribute__((unused))
static int tap_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

__attribute__((unused))
static int tap_done(void)
{
    printf("1..%d\n", tap_count);
    return tap_failed ? 1 : 0;
}

#endif
