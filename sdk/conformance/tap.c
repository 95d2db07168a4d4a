/* sdk/conformance/tap.c - TAP lines and per-case diagnostics */
#include "config.h"

#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A test that fails hundreds of sub-checks says so once, not hundreds of
 * times: the first lines are what a reader needs. */
#define CONF_MAX_FAIL_LINES 20

void conf_case_init(conf_case *c, const char *name, bool verbose)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->verbose = verbose;
    pthread_mutex_init(&c->lock, NULL);
}

void conf_case_free(conf_case *c)
{
    free(c->skip);
    free(c->diag);
    pthread_mutex_destroy(&c->lock);
}

/* Append "# <text>\n" for every line of the formatted text.  Called with
 * the lock held. */
static void append_line(conf_case *c, const char *fmt, va_list ap)
{
    char buf[2048];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n < 0)
        return;
    size_t need = c->diag_len + 2 * (size_t)n + 8;
    char *p = realloc(c->diag, need);
    if (p == NULL)
        return; /* losing a diagnostic must not lose the verdict */
    c->diag = p;
    const char *s = buf;
    for (;;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        memcpy(c->diag + c->diag_len, "# ", 2);
        memcpy(c->diag + c->diag_len + 2, s, len);
        c->diag_len += 2 + len;
        c->diag[c->diag_len++] = '\n';
        if (nl == NULL || nl[1] == '\0')
            break;
        s = nl + 1;
    }
    c->diag[c->diag_len] = '\0';
}

/* A diagnostic, kept until the case has said CONF_MAX_FAIL_LINES
 * failures; @failure makes it one more and fails the case. */
static void add_diag(conf_case *c, bool failure, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&c->lock);
    if (failure) {
        c->failed = true;
        c->n_fail_lines++;
    }
    if (c->n_fail_lines <= CONF_MAX_FAIL_LINES)
        append_line(c, fmt, ap);
    pthread_mutex_unlock(&c->lock);
}

void conf_fail(conf_case *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_diag(c, true, fmt, ap);
    va_end(ap);
}

void conf_diag(conf_case *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_diag(c, false, fmt, ap);
    va_end(ap);
}

void conf_note(conf_case *c, const char *fmt, ...)
{
    if (!c->verbose)
        return;
    pthread_mutex_lock(&c->lock);
    va_list ap;
    va_start(ap, fmt);
    append_line(c, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&c->lock);
}

void conf_skip(conf_case *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
    /* A TAP directive ends at the line's end. */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '#')
            *p = ' ';
    pthread_mutex_lock(&c->lock);
    if (c->skip == NULL)
        c->skip = strdup(buf);
    pthread_mutex_unlock(&c->lock);
}

void tap_plan(size_t n)
{
    printf("1..%zu\n", n);
    fflush(stdout);
}

bool tap_report(size_t number, conf_case *c)
{
    /* A failure outranks a skip: a test that failed before it found it
     * could not go on has still found a failure. */
    if (c->failed)
        printf("not ok %zu - %s\n", number, c->name);
    else if (c->skip != NULL)
        printf("ok %zu - %s # SKIP %s\n", number, c->name, c->skip);
    else
        printf("ok %zu - %s\n", number, c->name);
    if (c->diag_len > 0)
        fwrite(c->diag, 1, c->diag_len, stdout);
    if (c->n_fail_lines > CONF_MAX_FAIL_LINES)
        printf("# ... and %zu more failures\n", c->n_fail_lines - CONF_MAX_FAIL_LINES);
    fflush(stdout);
    return c->failed;
}

void conf_preview(const void *data, size_t len, char *out, size_t cap)
{
    const unsigned char *p = data;
    size_t o = 0;
    if (cap == 0)
        return;
    out[0] = '\0';
    if (p == NULL) {
        snprintf(out, cap, "(null)");
        return;
    }
    out[o++] = '"';
    for (size_t i = 0; i < len; i++) {
        char esc[8];
        unsigned char b = p[i];
        if (b == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (b == '\\' || b == '"')
            snprintf(esc, sizeof esc, "\\%c", b);
        else if (b >= 0x20 && b < 0x7f)
            snprintf(esc, sizeof esc, "%c", b);
        else
            snprintf(esc, sizeof esc, "\\x%02x", b);
        size_t el = strlen(esc);
        if (o + el + 5 >= cap) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, esc, el);
        o += el;
    }
    if (o + 1 < cap)
        out[o++] = '"';
    out[o] = '\0';
}
