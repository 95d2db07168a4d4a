/* core/eval-program.c - the program a sample is graded with, per format
 *
 * HumanEval: prompt + completion + "\n" + test + "\n" + "check(ENTRY)\n",
 * the reference harness's layout.  MBPP: test_setup_code + completion +
 * the asserts of test_list.  Both are written to program.py and run by a
 * small runner (the template's main.py) that prints a random marker only
 * when every test returned.  Generic: prompt + completion + test, graded
 * by its exit status alone.
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

/* The runner (main.py): runs program.py as the reference harness does,
 * with exec() in fresh globals, so the program is not "__main__" and an
 * `if __name__ == "__main__":` block of a completion does not run; then,
 * only when exec returned (every test passed), prints the marker with
 * os.write and os._exit taken before the program could patch them, and
 * leaves at once so no atexit handler or thread of the program runs
 * after it.  The marker is not in program.py, the file the code under
 * test comes from.  When Python was started with -S (core/eval-run.c),
 * site's work is done on the first import that needs it, and exit, quit
 * and help are the builtins site would have made. */
static void put_runner(sbuf *b, const char *marker)
{
    put(b, "# polysandbox eval: runs " CORE_EVAL_PROGRAM_FILE " as the reference harness does "
           "(exec, not as __main__);\n"
           "# the marker line is printed only when every test in it returned.\n"
           "import os, sys\n"
           "def _late_site():\n"
           "    # Started with -S (see polysandbox-eval(1), SPEED): site is imported\n"
           "    # on the first import the standard library does not satisfy.\n"
           "    import builtins, _sitebuiltins\n"
           "    class LateSite:\n"
           "        @classmethod\n"
           "        def find_spec(cls, name, path=None, target=None):\n"
           "            if path is not None:\n"
           "                return None\n"
           "            sys.meta_path.remove(cls)\n"
           "            import site\n"
           "            site.main()\n"
           "            from importlib.machinery import PathFinder\n"
           "            return PathFinder.find_spec(name)\n"
           "    sys.meta_path.append(LateSite)\n"
           "    for q in (\"exit\", \"quit\"):\n"
           "        setattr(builtins, q, _sitebuiltins.Quitter(q, \"Ctrl-D (i.e. EOF)\"))\n"
           "    builtins.help = _sitebuiltins._Helper()\n"
           "if sys.flags.no_site:\n"
           "    _late_site()\n"
           "del _late_site\n"
           "_write, _exit, _out = os.write, os._exit, sys.stdout\n"
           "with open(\"" CORE_EVAL_PROGRAM_FILE "\", encoding=\"utf-8\") as _f:\n"
           "    _code = compile(_f.read(), \"" CORE_EVAL_PROGRAM_FILE "\", \"exec\")\n"
           "del _f\n"
           "exec(_code, {})\n"
           "try:\n"
           "    _out.flush()\n"
           "    sys.stdout.flush()\n"
           "except Exception:\n"
           "    pass\n"
           "_write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX);
    put(b, marker);
    put(b, "\\n\")\n"
           "_exit(0)\n");
}

char *core_eval_runner(const char *marker)
{
    sbuf b = { 0 };

    put_runner(&b, marker);
    return b.s;
}

char *core_eval_build_program(const sbx_eval_dataset *ds, const core_eval_task *t,
                              const char *completion)
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
    char marker[CORE_EVAL_MARKER_LEN + 1], *prog;
    const core_eval_task *t;
    sbuf b = { 0 };

    if (!ds || !s || i >= s->n)
        return NULL;
    memset(marker, 'x', CORE_EVAL_MARKER_LEN);
    marker[CORE_EVAL_MARKER_LEN] = '\0';
    t = &ds->tasks[s->v[i].task];
    if (lang)
        *lang = t->lang;
    prog = core_eval_build_program(ds, t, s->v[i].completion);
    if (!prog || !core_eval_uses_marker(ds))
        return prog;
    /* program.py, then the runner that runs it */
    b.s = prog;
    b.len = b.cap = strlen(prog);
    b.cap++;
    put(&b, "\n# ---- " CORE_EVAL_RUNNER_FILE ", the runner that runs " CORE_EVAL_PROGRAM_FILE " ----\n");
    put_runner(&b, marker);
    return b.s;
}
