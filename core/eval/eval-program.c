/* core/eval/eval-program.c - the program a sample is graded with, per format
 *
 * HumanEval: prompt + completion + "\n" + test + "\n" + "check(ENTRY)\n",
 * the reference harness's layout.  MBPP: test_setup_code + completion +
 * the asserts of test_list.  Both are written to program.py and run by a
 * small runner (the template's main.py) in which a process that never
 * runs the program (the sandbox's init, or a keeper the runner forks)
 * prints the run's random marker, which it takes from a file of the
 * core's before the program starts, only when every test returned.  With --isolated-check the tests go to check.py, run by the
 * runner's process, and program.py holds the completion alone, run in a
 * child and called with literals.
 * Generic: prompt + completion + test, graded by its exit status alone.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "inside/seal.h"

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
    return ds->fmt == SBX_EVAL_FORMAT_HUMANEVAL || ds->fmt == SBX_EVAL_FORMAT_MBPP ||
           ds->fmt == SBX_EVAL_FORMAT_EVALPLUS;
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

/* What every runner does first: with Python started with -S
 * (core/eval/eval-run.c), site's work is done on the first import that needs
 * it, and exit, quit and help are the builtins site would have made.
 * Then this process makes itself undumpable (PR_SET_DUMPABLE 0) before
 * it forks: the process that keeps the marker stays so, and the one the
 * completion runs in (_child: dumpable again, as a program is) may then,
 * though of the same uid, neither read the other's memory nor open its
 * descriptors through /proc.  The marker is in a file of the core's
 * (CORE_EVAL_MARKER_FILE), read and removed by the keeper before the
 * completion's process may go on (@file: the pass line's, SBX_SEAL_FILE, for
 * the plain runner).  gc.freeze(): the collections after
 * the fork leave the pages the two share alone. */
static void put_prologue(sbuf *b, const char *file)
{
    put(b, "import os, sys\n"
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
           "import ctypes\n"
           "_prctl = ctypes.CDLL(None, use_errno=True).prctl\n"
           "if _prctl(4, 0, 0, 0, 0) != 0:       # PR_SET_DUMPABLE\n"
           "    sys.exit(\"polysandbox eval: prctl(PR_SET_DUMPABLE) failed\")\n"
           "import gc\n"
           "gc.freeze()\n"
           "def _child():\n"
           "    # the process the completion runs in is dumpable, as a program is\n"
           "    _prctl(4, 1, 0, 0, 0)\n"
           "def _marker():\n"
           "    # the run's marker, from the core's file: read and removed by the\n"
           "    # process that keeps it, once forked, before any of the program runs\n"
           "    try:\n"
           "        with open(\"");
    put(b, file);
    put(b, "\", \"rb\") as f:\n"
           "            m = f.read(4096)\n"
           "        os.unlink(\"");
    put(b, file);
    put(b, "\")\n"
           "    except OSError:\n"
           "        m = b\"\"\n"
           "    m = m.strip()\n"
           "    return m[len(b\"" CORE_EVAL_MARKER_PREFIX "\"):] if m.startswith(b\"" CORE_EVAL_MARKER_PREFIX "\") else m\n");
}

/* The pass line: "\n<prefix><marker>\n", then leave at once. */
#define PASS_LINE "    os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX "\" + _m + b\"\\n\")\n" \
                  "    os._exit(0)\n"

/* The runner (main.py) of the same interpreter.  The pass line (the
 * run's marker) is in a file of the core's, SBX_SEAL_FILE.  Where the
 * sandbox's init took it before the runner started (the local
 * provider's zygote, sdk/inside/seal.h) the init keeps it and the
 * runner has a pipe on SBX_SEAL_FD to ask for it; elsewhere the runner
 * first forks a process that keeps it (read from the file, which it
 * removes before the program may start) and never runs any of the
 * program.  Then it runs program.py as the reference harness does, with
 * exec() in fresh globals (so the program is not "__main__" and an
 * `if __name__ == "__main__":` block of a completion does not run), and
 * when exec returned (every test passed) writes "1" to the keeper (the
 * init or the forked one), which prints the pass line: the forked one at
 * once, the runner waiting for it; the init once the runner's processes
 * are gone.  The runner leaves at once, so no atexit handler or thread
 * of the program runs after it.  The marker is in no file, object or
 * memory of the program's process, which is the one whose status the
 * sandbox reports, as before.  What this cannot stop (code that writes
 * the "1" itself) is in doc/security.md. */
static void put_runner(sbuf *b)
{
    put(b, "# polysandbox eval: runs " CORE_EVAL_PROGRAM_FILE " as the reference harness does "
           "(exec, not as __main__);\n"
           "# a keeper (the sandbox's init, or a process forked first) holds the run's\n"
           "# pass line, and prints it only when told that every test in it returned.\n");
    put_prologue(b, SBX_SEAL_FILE);
    put(b, "_sealed = False\n"
           "if not os.path.lexists(\"" SBX_SEAL_FILE "\"):\n"
           "    # taken by the sandbox's init, which keeps it: our pipe to it\n"
           "    try:\n"
           "        import stat\n"
           "        _sealed = stat.S_ISFIFO(os.fstat(" SBX_SEAL_FD_STR ").st_mode)\n"
           "    except OSError:\n"
           "        pass\n"
           "if _sealed:\n"
           "    _w, _pid = " SBX_SEAL_FD_STR ", 0\n"
           "else:\n"
           "    _r, _w = os.pipe()\n"
           "    _gr, _gw = os.pipe()\n"
           "    _pid = os.fork()\n"
           "    if _pid == 0:\n"
           "        os.close(_w)\n"
           "        os.close(_gr)\n"
           "        _m = _marker()\n"
           "        os.close(_gw)         # taken: the program may start\n"
           "        if os.read(_r, 1) == b\"1\" and _m:\n"
           "            os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX "\" + _m + b\"\\n\")\n"
           "        os._exit(0)\n"
           "    os.close(_r)\n"
           "    os.close(_gw)\n"
           "    os.read(_gr, 1)          # the pass line's file is gone\n"
           "    os.close(_gr)\n"
           "    del _r, _gr, _gw\n"
           "_child()\n"
           "del _prctl, _child, _marker, _sealed\n"
           "_write, _exit, _out, _wait = os.write, os._exit, sys.stdout, os.waitpid\n"
           "with open(\"" CORE_EVAL_PROGRAM_FILE "\", encoding=\"utf-8\") as _f:\n"
           "    _code = compile(_f.read(), \"" CORE_EVAL_PROGRAM_FILE "\", \"exec\")\n"
           "del _f\n"
           "exec(_code, {})\n"
           "try:\n"
           "    _out.flush()\n"
           "    sys.stdout.flush()\n"
           "except Exception:\n"
           "    pass\n"
           "_write(_w, b\"1\")\n"
           "if _pid:\n"
           "    _wait(_pid, 0)\n"
           "_exit(0)\n");
}

/* The runner of --isolated-check: the verdict comes from this process,
 * which runs the dataset's own code (prompt and test, or MBPP's setup
 * and asserts: check.py) and never the completion.  The completion runs
 * in a child (program.py: the prompt and the completion, or the setup
 * and the completion) and serves calls: each call of the function under
 * test becomes a request (its arguments as Python literals) and the
 * answer a literal read back with ast.literal_eval, so nothing of the
 * completion's objects (an __eq__ that says True, a patched builtin)
 * reaches the check.  @entry: HumanEval's entry point, which check.py's
 * check() is called with; NULL for MBPP, whose asserts call every name
 * they need that check.py does not define.  @keeper: the code that
 * grades instead of check.py's tests (EvalPlus), or NULL. */
static void put_isolated_runner(sbuf *b, const char *entry, const char *keeper)
{
    put(b, "# polysandbox eval --isolated-check: the check (" CORE_EVAL_CHECK_FILE ") runs here;\n"
           "# the completion (" CORE_EVAL_PROGRAM_FILE ") in a child, which answers calls with\n"
           "# literals.\n");
    put_prologue(b, CORE_EVAL_MARKER_FILE);
    put(b, "import ast, builtins\n"
           "ENTRY = ");
    if (entry) {
        put(b, "\"");
        put(b, entry);
        put(b, "\"\n");
    } else {
        put(b, "None\n");
    }
    put(b, "_qr, _qw = os.pipe()\n"
           "_ar, _aw = os.pipe()\n"
           "_gr, _gw = os.pipe()\n"
           "_pid = os.fork()\n"
           "if _pid == 0:\n"
           "    os.close(_qw)\n"
           "    os.close(_ar)\n"
           "    os.close(_gw)\n"
           "    os.read(_gr, 1)          # the marker's file is gone\n"
           "    os.close(_gr)\n"
           "    _child()\n"
           "    _ask, _say = os.fdopen(_qr, \"rb\"), os.fdopen(_aw, \"wb\", 0)\n"
           "    _g = {\"__name__\": \"__sandbox__\"}\n"
           "    try:\n"
           "        with open(\"" CORE_EVAL_PROGRAM_FILE "\", encoding=\"utf-8\") as _f:\n"
           "            exec(compile(_f.read(), \"" CORE_EVAL_PROGRAM_FILE "\", \"exec\"), _g)\n"
           "        _say.write(b\"ok\\n\")\n"
           "    except BaseException as e:\n"
           "        import traceback\n"
           "        traceback.print_exc()\n"
           "        _say.write(b\"E\\n\")\n"
           "        os._exit(1)\n"
           "    for _line in _ask:\n"
           "        try:\n"
           "            _name, _args, _kw, _nn = ast.literal_eval(_line.decode())\n"
           "            _v = _g[_name](*_args, **_kw)\n"
           "            if _nn and not isinstance(_v, bool):   # EvalPlus: only None or not\n"
           "                _v = _v is not None\n"
           "            _out = b\"R\" + repr(_v).encode()\n"
           "        except BaseException as e:\n"
           "            _out = b\"E\" + repr(type(e).__name__).encode()\n"
           "        try:\n"
           "            sys.stdout.flush()\n"
           "        except Exception:\n"
           "            pass\n"
           "        _say.write(_out.replace(b\"\\n\", b\" \") + b\"\\n\")\n"
           "    os._exit(0)\n"
           "os.close(_qr)\n"
           "os.close(_aw)\n"
           "os.close(_gr)\n"
           "_m = _marker()\n"
           "os.close(_gw)                # taken: the completion may start\n"
           "_ask, _hear = os.fdopen(_qw, \"wb\", 0), os.fdopen(_ar, \"rb\")\n"
           "class IsolatedCheckError(Exception):\n"
           "    pass\n"
           "class _Floats(ast.NodeTransformer):\n"
           "    def visit_Name(self, n):\n"
           "        if n.id not in (\"inf\", \"nan\", \"infj\", \"nanj\"):\n"
           "            return n\n"
           "        v = complex(n.id) if n.id[-1] == \"j\" else float(n.id)\n"
           "        return ast.copy_location(ast.Constant(v), n)\n"
           "def _literal(s):\n"
           "    # ast.literal_eval, and the floats repr writes as names (inf, nan)\n"
           "    try:\n"
           "        return ast.literal_eval(s)\n"
           "    except ValueError:\n"
           "        return ast.literal_eval(_Floats().visit(ast.parse(s.lstrip(), mode=\"eval\")))\n"
           "def _call(name, args, kw, not_none=False):\n"
           "    q = repr((name, args, kw, not_none))\n"
           "    try:\n"
           "        same = ast.literal_eval(q) == (name, args, kw, not_none)\n"
           "    except Exception:\n"
           "        same = False\n"
           "    if not same:\n"
           "        raise IsolatedCheckError(\"an argument of %s is not a Python literal: the \"\n"
           "                                 \"isolated check cannot pass it\" % name)\n"
           "    _ask.write(q.encode() + b\"\\n\")\n"
           "    a = _hear.readline(1 << 26)\n"
           "    if a[:1] == b\"R\":\n"
           "        return _literal(a[1:].decode())\n"
           "    raise IsolatedCheckError(\"%s raised %s\" % (name, a[1:].decode().strip() or\n"
           "                                                \"nothing: its process ended\"))\n"
           "def _proxy(name, not_none=False):\n"
           "    # not_none: an answer that is no bool comes back as whether it is\n"
           "    # None (EvalPlus's check of answers that are no literals, re.Match)\n"
           "    return lambda *args, **kw: _call(name, args, kw, not_none)\n"
           "def _names(code):\n"
           "    for n in code.co_names:\n"
           "        yield n\n"
           "    for c in code.co_consts:\n"
           "        if hasattr(c, \"co_names\"):\n"
           "            yield from _names(c)\n"
           );
    if (keeper) {
        put(b, keeper);
    } else {
        put(b, "_st = 0\n"
           "try:\n"
           "    if _hear.readline() != b\"ok\\n\":\n"
           "        raise IsolatedCheckError(\"the completion failed before any test\")\n"
           "    with open(\"" CORE_EVAL_CHECK_FILE "\", encoding=\"utf-8\") as _f:\n"
           "        _code = compile(_f.read(), \"" CORE_EVAL_CHECK_FILE "\", \"exec\")\n"
           "    _g = {\"__name__\": \"__check__\"}\n"
           "    if ENTRY is None:\n"
           "        for n in set(_names(_code)):\n"
           "            if not hasattr(builtins, n):\n"
           "                _g[n] = _proxy(n)\n"
           "    exec(_code, _g)\n"
           "    if ENTRY is not None:\n"
           "        _g[\"check\"](_proxy(ENTRY))\n"
           "except BaseException:\n"
           "    import traceback\n"
           "    traceback.print_exc()\n"
           "    _st = 1\n");
    }
    put(b, "try:\n"
           "    sys.stdout.flush()\n"
           "except Exception:\n"
           "    pass\n"
           "_ask.close()\n"
           "try:\n"
           "    os.kill(_pid, 9)\n"
           "except OSError:\n"
           "    pass\n"
           "os.waitpid(_pid, 0)\n"
           "if _st == 0 and _m:\n"
           PASS_LINE
           "os._exit(1)\n");
}

/* The runner of @t's programs onto @b. */
static void put_runner_of(sbuf *b, const sbx_eval_dataset *ds, const core_eval_task *t,
                          bool isolated, const sbx_eval_opts *o)
{
    char *keeper = NULL;

    if (!isolated) {
        put_runner(b);
        return;
    }
    if (ds->fmt == SBX_EVAL_FORMAT_EVALPLUS && !(keeper = core_eval_evalplus_check(t, o))) {
        free(b->s);
        b->s = NULL;
        b->failed = true;
        return;
    }
    put_isolated_runner(b, ds->fmt == SBX_EVAL_FORMAT_MBPP ? NULL : t->entry_point, keeper);
    free(keeper);
}

char *core_eval_runner(const sbx_eval_dataset *ds, const core_eval_task *t, bool isolated,
                       const sbx_eval_opts *o)
{
    sbuf b = { 0 };

    put_runner_of(&b, ds, t, isolated, o);
    return b.s;
}

bool core_eval_isolated(const sbx_eval_dataset *ds, const core_eval_task *t, bool want)
{
    if (ds->fmt == SBX_EVAL_FORMAT_EVALPLUS)
        return true;
    return want && core_eval_can_isolate(ds, t);
}

bool core_eval_can_isolate(const sbx_eval_dataset *ds, const core_eval_task *t)
{
    const char *e = t->entry_point;

    if (ds->fmt == SBX_EVAL_FORMAT_MBPP)
        return true;
    if ((ds->fmt != SBX_EVAL_FORMAT_HUMANEVAL && ds->fmt != SBX_EVAL_FORMAT_EVALPLUS) ||
        !e || !*e || (*e >= '0' && *e <= '9'))
        return false;
    for (; *e; e++)   /* put into the runner as a string: an identifier only */
        if (!((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
              (*e >= '0' && *e <= '9') || *e == '_'))
            return false;
    return true;
}

char *core_eval_build_check(const sbx_eval_dataset *ds, const core_eval_task *t)
{
    sbuf b = { 0 };

    if (ds->fmt == SBX_EVAL_FORMAT_HUMANEVAL) {
        put(&b, t->prompt);
        put(&b, "\n");
        put(&b, t->test);
        put(&b, "\n");
    } else if (ds->fmt == SBX_EVAL_FORMAT_EVALPLUS) {
        /* the reference, as EvalPlus computes its expected outputs */
        put(&b, t->prompt);
        put(&b, t->canonical);
        put(&b, "\n");
    } else {
        if (t->setup && t->setup[0]) {
            put(&b, t->setup);
            put(&b, "\n");
        }
        for (char **a = t->tests; a && *a; a++) {
            put(&b, *a);
            put(&b, "\n");
        }
    }
    if (!b.failed && !b.s)
        b.s = strdup("");
    return b.s;
}

char *core_eval_build_program(const sbx_eval_dataset *ds, const core_eval_task *t,
                              const core_eval_sample *smp, bool isolated)
{
    const char *completion = smp->completion;
    sbuf b = { 0 };

    if (core_eval_judged(ds)) {     /* the completion is the whole program */
        put(&b, completion);
        return b.failed ? NULL : b.s ? b.s : strdup("");
    }
    switch (ds->fmt) {
    case SBX_EVAL_FORMAT_EVALPLUS:  /* EvalPlus's solution: prompt + completion */
        if (smp->whole) {
            put(&b, completion);
            put(&b, "\n");
            break;
        }
        /* fall through */
    case SBX_EVAL_FORMAT_HUMANEVAL:
        put(&b, t->prompt);
        put(&b, completion);
        put(&b, "\n");
        if (isolated)   /* the tests are in check.py */
            break;
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
        for (char **a = t->tests; !isolated && a && *a; a++) {
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
    return sbx_eval_program_opts(ds, s, i, NULL, lang);
}

char *sbx_eval_program_opts(const sbx_eval_dataset *ds, const sbx_eval_samples *s, size_t i,
                            const sbx_eval_opts *o, const char **lang)
{
    bool isolated = o && o->isolated;
    const core_eval_task *t;
    char *prog, *check = NULL;
    sbuf b = { 0 };

    if (!ds || !s || i >= s->n)
        return NULL;
    t = &ds->tasks[s->v[i].task];
    if (lang)
        *lang = t->lang;
    isolated = core_eval_isolated(ds, t, isolated);
    prog = core_eval_build_program(ds, t, &s->v[i], isolated);
    if (!prog || !core_eval_uses_marker(ds))
        return prog;
    if (isolated && !(check = core_eval_build_check(ds, t))) {
        free(prog);
        return NULL;
    }
    /* program.py, check.py, then the runner that runs them */
    b.s = prog;
    b.len = b.cap = strlen(prog);
    b.cap++;
    if (check) {
        put(&b, "\n# ---- " CORE_EVAL_CHECK_FILE ", the check, run apart from the completion "
                "----\n");
        put(&b, check);
        free(check);
    }
    put(&b, "\n# ---- " CORE_EVAL_RUNNER_FILE ", the runner that runs " CORE_EVAL_PROGRAM_FILE
            " ----\n");
    put_runner_of(&b, ds, t, isolated, o);
    return b.s;
}
