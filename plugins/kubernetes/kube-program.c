/* plugins/kubernetes/kube-program.c - what an exec runs: a bootstrap in the
 * URL, the program and its data on stdin
 *
 * The command of a pods/exec request travels in the URL's query string,
 * and libwebsockets 4.1 writes the request line into a 2 KiB buffer.  So
 * every exec runs the same short bootstrap
 *
 *     sh -c 'IFS= read -r n; ...; eval "$s"'
 *
 * which reads a line count n and then n lines from stdin with the shell's
 * own read (one byte at a time on a pipe, so nothing past the program is
 * consumed), and evaluates them.  The program sets L (the length of the
 * data that follows it on stdin) and the positional parameters (each
 * argument single-quoted, so any byte but NUL survives, newlines too),
 * then does its work; the data after it (files' tars, then the command's
 * stdin) is taken with `head -c`, so that each piece ends where it should
 * whether or not the exec's stdin can be closed (v4 has no close).  A
 * streamed stdin (L=s) has no length: the command inherits what is left
 * of the exec's stdin and sees its end when the client sends v5's CLOSE.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube-int.h"

static const char bootstrap[] =
    "IFS= read -r n || exit 125; s=; while [ \"$n\" -gt 0 ]; do IFS= read -r l || exit 125; "
    "s=\"$s$l\n\"; n=$((n-1)); done; eval \"$s\"";

char *kube_exec_path(struct kube_prov *p, const char *pod)
{
    char *e = kube_escape(bootstrap);
    char *s = NULL;
    if (e && asprintf(&s, "/api/v1/namespaces/%s/pods/%s/exec?container=%s&stdin=true"
                      "&stdout=true&stderr=true&tty=false&command=%%2Fbin%%2Fsh&command=-c"
                      "&command=%s", p->namespace, pod, KUBE_CONTAINER, e) < 0)
        s = NULL;
    free(e);
    return s;
}

struct buf {
    char *p;
    size_t len, cap;
};

static int put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            return -1;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static int puts_(struct buf *b, const char *s)
{
    return put(b, s, strlen(s));
}

/* @s single-quoted for sh: ' becomes '\''. */
static int quoted(struct buf *b, const char *s)
{
    if (put(b, "'", 1))
        return -1;
    for (const char *q; (q = strchr(s, '\'')); s = q + 1)
        if (put(b, s, (size_t)(q - s)) || puts_(b, "'\\''"))
            return -1;
    return puts_(b, s) || put(b, "'", 1) ? -1 : 0;
}

int kube_program(const char *body, const char *const *args, size_t l,
                 const struct kube_piece *pieces, size_t n, unsigned char **out,
                 size_t *out_len)
{
    struct buf text = {0}, all = {0};
    char num[64];
    *out = NULL;
    *out_len = 0;
    if (l == KUBE_L_STREAM)
        snprintf(num, sizeof num, "L=s\nset --");
    else
        snprintf(num, sizeof num, "L=%zu\nset --", l);
    int bad = puts_(&text, num);
    for (size_t i = 0; !bad && args && args[i]; i++)
        bad = put(&text, " ", 1) || quoted(&text, args[i]);
    bad = bad || put(&text, "\n", 1) || puts_(&text, body);
    if (!bad && text.p[text.len - 1] != '\n')
        bad = put(&text, "\n", 1);
    size_t lines = 0;
    for (size_t i = 0; !bad && i < text.len; i++)
        lines += text.p[i] == '\n';
    snprintf(num, sizeof num, "%zu\n", lines);
    bad = bad || puts_(&all, num) || put(&all, text.p, text.len);
    for (size_t i = 0; !bad && i < n; i++)
        bad = pieces[i].len && put(&all, pieces[i].data, pieces[i].len);
    free(text.p);
    if (bad) {
        free(all.p);
        return SBX_E_NOMEM;
    }
    *out = (unsigned char *)all.p;
    *out_len = all.len;
    return SBX_OK;
}
