/* tests/unit/tap.h - a few lines of TAP: the one helper of every C test
 * under tests/ (unit tests and the programs the shell tests run)
 *
 * ok(cond, "what") prints "ok N - what" or "not ok N - what" and returns
 * cond; diag() prints a "# " line; tap_plan(n) prints the plan first when
 * the count is known; tap_done() prints the plan (unless tap_plan did) and
 * gives the exit status (non-zero when any failed); tap_write_file()
 * writes a test's input files.  A program whose lines go under a plan
 * that its script prints sets tap_count to the number before its first
 * line and ends with tap_status().
 */
#ifndef POLYSANDBOX_TESTS_TAP_H
#define POLYSANDBOX_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count;
static int tap_failed;
static int tap_planned;

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

/* The plan, before the first line. */
__attribute__((unused))
static void tap_plan(int n)
{
    printf("1..%d\n", n);
    fflush(stdout);
    tap_planned = 1;
}

/* The exit status: 1 when any check failed. */
__attribute__((unused))
static int tap_status(void)
{
    return tap_failed ? 1 : 0;
}

__attribute__((unused))
static int tap_done(void)
{
    if (!tap_planned)
        printf("1..%d\n", tap_count);
    fflush(stdout);
    return tap_status();
}

#endif
