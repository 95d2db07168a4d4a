/* sdk/conformance/tap.h - one TAP test case: verdict, skip reason, diagnostics
 *
 * A test function records failures and notes on its conf_case; the runner
 * prints "ok N - name" / "not ok N - name" / "ok N - name # SKIP reason"
 * and then the diagnostics as "# " lines.  Safe to call from several
 * threads of one test at once.
 */
#ifndef CONF_TAP_H
#define CONF_TAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct conf_case {
    const char *name;
    bool verbose;        /* keep notes, not only failures */
    bool failed;
    char *skip;          /* reason, or NULL */
    char *diag;          /* "# ...\n" lines, or NULL */
    size_t diag_len;
    size_t n_fail_lines; /* to cap very long failure lists */
    pthread_mutex_t lock;
} conf_case;

void conf_case_init(conf_case *c, const char *name, bool verbose);
void conf_case_free(conf_case *c);

/* Mark the case failed and add a diagnostic line. */
void conf_fail(conf_case *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add a diagnostic line without failing (always shown). */
void conf_diag(conf_case *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add a line shown only with --verbose. */
void conf_note(conf_case *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Skip the case (first reason wins). */
void conf_skip(conf_case *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print the plan line. */
void tap_plan(size_t n);
/* Print the case's TAP line and its diagnostics; returns true if it failed. */
bool tap_report(size_t number, conf_case *c);

/* Render @len bytes as a short C-escaped preview into @out (size @cap). */
void conf_preview(const void *data, size_t len, char *out, size_t cap);

#endif /* CONF_TAP_H */
