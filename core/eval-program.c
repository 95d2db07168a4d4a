/* core/eval-program.c - the program a sample is graded with, per format
 *
 * HumanEval: prompt + completion + "\n" + test + "\n" + "check(ENTRY)\n",
 * the reference harness's layout.  MBPP: test_setup_code + completion +
 * the asserts of test_list.  Both then get an epilogue that runs only
 * when every test returned: it prints a random marker the code under
 * test never saw, and leaves with os._exit(0) so no atexit handler or
 * lingering thread of the completion runs after it.  Generic: prompt +
 * completion + test, graded by its exit status alone.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "eval-int.h"

int core_eval_new_marker(char *marker)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[CORE_EVAL_MARKER_LEN / 2];
    size_t got = 0;

    while (got < sizeof raw) {
        ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return core_error_set(SBX_E_IO, NULL, "getrandom: %s", strerror(errno));
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < sizeof raw; i++) {
        marker[2 * i] = hex[raw[i] >> 4];
        marker[2 * i + 1] = hex[raw[i] & 15];
    }
    marker[CORE_EVAL_MARKER_LEN] = '\0';
    return SBX_OK;
}

bool core_eval_uses_marker(const sbx_eval_dataset *ds)
{
    return ds->fmt == SBX_EVAL_FORMAT_HUMANEVAL || ds->fmt == SBX_EVAL_FORMAT_MBPP;
}

/* A growing string; on ENOMEM it is freed and stays NULL. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
} sbuf;

static void put(sbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (b->failed || n == 0)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = (b->len + n + 1) * 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            free(b->s);
            b->s = NULL;
            b->failed = true;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

/* The Python epilogue.  Saved references to os.write and os._exit are
 * not taken earlier on purpose: nothing may precede the prompt (it may
 * hold a __future__ import), and a completion that patches os to fake
 * the marker must first read its own source to learn it. */
static void put_epilogue(sbuf *b, const char *marker)
{
    put(b, "\n\n# polysandbox eval: reached only when every test above returned\n"
           "import os as _sbx_os, sys as _sbx_sys\n"
           "try:\n"
           "    _sbx_sys.stdout.flush()\n"
           "except Exception:\n"
           "    pass\n"
           "_sbx_os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX);
    put(b, marker);
    put(b, "\\n\")\n"
           "_sbx_os._exit(0)\n");
}

char *core_eval_build_program(const sbx_eval_dataset *ds, const core_eval_task *t,
                              const char *completion, const char *marker)
{
    sbuf b = { 0 };

    switch (ds->fmt) {
    case SBX_EVAL_FORMAT_HUMANEVAL:
        put(&b, t->prompt);
        put(&b, completion);
        put(&b, "\n");
        put(&b, t->test);
        put(&b, "\ncheck(");
        put(&b, t->entry_point);
        put(&b, ")\n");
        put_epilogue(&b, marker);
        break;
    case SBX_EVAL_FORMAT_MBPP:
        if (t->setup && t->setup[0]) {
            put(&b, t->setup);
            put(&b, "\n");
        }
        put(&b, completion);
        put(&b, "\n");
        for (char **a = t->tests; a && *a; a++) {
            put(&b, *a);
            put(&b, "\n");
        }
        put_epilogue(&b, marker);
        break;
    case SBX_EVAL_FORMAT_GENERIC:
    default:
        put(&b, t->prompt);
        put(&b, completion);
        if (t->test) {
            put(&b, "\n");
            put(&b, t->test);
        }
        put(&b, "\n");
        break;
    }
    if (!b.failed && !b.s)
        b.s = strdup("");
    return b.s;
}

char *sbx_eval_program(const sbx_eval_dataset *ds, const sbx_eval_samples *s, size_t i,
                       const char **lang)
{
    char marker[CORE_EVAL_MARKER_LEN + 1];
    const core_eval_task *t;

    if (!ds || !s || i >= s->n)
        return NULL;
    memset(marker, 'x', CORE_EVAL_MARKER_LEN);
    marker[CORE_EVAL_MARKER_LEN] = '\0';
    t = &ds->tasks[s->v[i].task];
    if (lang)
        *lang = t->lang;
    return core_eval_build_program(ds, t, s->v[i].completion, marker);
}
