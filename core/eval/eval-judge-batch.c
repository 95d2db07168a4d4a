/* core/eval/eval-judge-batch.c - a judged sample's tests in one exec: the
 * runner (core/eval/eval-judge-runner.c, embedded by eval-judge-blob.c) is put
 * into the sandbox beside the compiled program and runs it once per test
 * (a Python script's: the Python runner, eval-judge-driver.py, which forks
 * one interpreter per test instead of starting one);
 * its report (eval-judge-proto.h) is read here as hostile: every length
 * and count is checked, and a test that has no complete, well-formed
 * report is simply not reported (the caller runs it on an exec of its
 * own, as without the runner). */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "buf.h"
#include "error.h"
#include "strv.h"

#define SLACK_NS UINT64_C(5000000000)    /* the runner's own start and reaping */
#define HEAD_MAX 96                      /* "SBXJ1 marker n limit caps fail_fast\n" */

/* The providers where a runner could not start (a sandbox of another
 * architecture, or one that cannot run a file it was given; for the Python
 * runner, an interpreter without ctypes): it is not tried there again by
 * this process, whose samples then pay no failed exec each.  Only a start
 * that failed is remembered, never a runner stopped later (a limit, a
 * test that killed it).  The key is the provider's name and, for the
 * Python runner, PY_KEY after it. */
#define NO_RUNNER_MAX 16
#define PROV_NAME_MAX 64             /* a longer name is not remembered */
#define PY_KEY "\npython"
static pthread_mutex_t no_runner_lock = PTHREAD_MUTEX_INITIALIZER;
static char no_runner[NO_RUNNER_MAX][PROV_NAME_MAX];
static size_t n_no_runner;

static bool runner_refused(const char *key)
{
    bool found = false;

    pthread_mutex_lock(&no_runner_lock);
    for (size_t i = 0; i < n_no_runner && !found; i++)
        found = !strcmp(no_runner[i], key);
    pthread_mutex_unlock(&no_runner_lock);
    return found;
}

bool core_eval_python_run(const sbx_template *tc)
{
    const char *const *run = sbx_template_run(tc);
    const char *base;

    if (!run || !run[0] || !run[1] || run[1][0] == '-' || !run[1][0])
        return false;
    base = strrchr(run[0], '/');
    base = base ? base + 1 : run[0];
    return !strncmp(base, "python3", 7) && strspn(base + 7, ".0123456789") == strlen(base + 7);
}

/* Remember @key when @r says the runner never started: exec failed with
 * 126 or 127, the system-call filter killed it, or it stopped (exit 2)
 * before its start line. */
static void note_start(const char *key, const sbx_result *r, const char *out, size_t len)
{
    sbx_run_status st = sbx_result_status(r);
    bool spoke = out && len > 0 && out[0] == '\n';

    size_t key_len = strlen(key);

    if (!(st == SBX_RUN_NOT_FOUND || st == SBX_RUN_NOT_EXECUTABLE || st == SBX_RUN_SECCOMP ||
          (st == SBX_RUN_NONZERO_EXIT && sbx_result_exit_code(r) == 2 && !spoke)) ||
        key_len >= PROV_NAME_MAX || runner_refused(key))
        return;
    pthread_mutex_lock(&no_runner_lock);
    /* memcpy, not snprintf: the length is checked above, which gcc's
     * truncation warning cannot see at -O1 */
    if (n_no_runner < NO_RUNNER_MAX)
        memcpy(no_runner[n_no_runner++], key, key_len + 1);
    pthread_mutex_unlock(&no_runner_lock);
}

/* Each test's "LEN\n" and bytes after the header: (transfer full). */
static char *stdin_of(const core_eval_task *t, size_t first, const char *marker,
                      uint64_t limit, uint64_t out_cap, uint64_t err_cap, bool fail_fast,
                      size_t *len)
{
    size_t total = HEAD_MAX, at;
    char *s;
    int n;

    for (size_t i = first; i < t->n_cases; i++) {
        if (t->cases[i].in_len > SIZE_MAX - total - 24)
            return NULL;
        total += t->cases[i].in_len + 24;
    }
    if (!(s = malloc(total)))
        return NULL;
    n = snprintf(s, HEAD_MAX, CORE_JR_MAGIC " %s %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
                 marker, t->n_cases - first, limit, out_cap, err_cap, fail_fast ? 1 : 0);
    if (n < 0 || n >= HEAD_MAX) {
        free(s);
        return NULL;
    }
    at = (size_t)n;
    for (size_t i = first; i < t->n_cases; i++) {
        at += (size_t)snprintf(s + at, 24, "%zu\n", t->cases[i].in_len);
        memcpy(s + at, t->cases[i].in, t->cases[i].in_len);
        at += t->cases[i].in_len;
    }
    *len = at;
    return s;
}

/* A decimal number ending at a space or a newline, at most @max. */
static bool num(const char **p, const char *end, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;
    const char *s = *p;

    if (s >= end || *s < '0' || *s > '9')
        return false;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (x > (max - (uint64_t)(*s - '0')) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (s >= end || (*s != ' ' && *s != '\n'))
        return false;
    *p = s + 1;
    *v = x;
    return true;
}

static bool take(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(end - *p) < n || memcmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

int core_eval_batch_parse(const char *out, size_t len, const char *marker, uint64_t out_cap,
                          core_jr_test *tests, size_t n)
{
    const char *p = out, *end;
    size_t cur = 0;
    core_buf b = { 0 };

    if (!out)
        return SBX_OK;          /* no runner spoke: nothing reported */
    end = out + len;
    if (!take(&p, end, "\n" CORE_EVAL_MARKER_PREFIX CORE_JR_START) ||
        !take(&p, end, marker) || !take(&p, end, "\n"))
        return SBX_OK;          /* no runner spoke: nothing reported */
    while (p < end && cur < n) {
        uint64_t v, clean, i, wall, cpu;

        if (take(&p, end, "D ")) {
            if (!num(&p, end, CORE_JR_CHUNK, &v) || p[-1] != '\n' ||
                (uint64_t)(end - p) < v || b.len + v > out_cap + 1)
                break;
            if (core_buf_append(&b, p, (size_t)v) != SBX_OK) {
                free(b.data);
                return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            }
            p += v;
        } else if (take(&p, end, "T ")) {
            if (!num(&p, end, CORE_JR_MAX_TESTS, &i) || p[-1] != ' ' || i != cur ||
                !num(&p, end, 1, &clean) || p[-1] != ' ' ||
                !num(&p, end, UINT64_MAX, &wall) || p[-1] != ' ' ||
                !num(&p, end, UINT64_MAX, &cpu) || p[-1] != '\n')
                break;
            tests[cur].reported = true;
            tests[cur].clean = clean == 1 && b.len <= out_cap;
            tests[cur].out = (char *)b.data;
            tests[cur].out_len = b.len;
            memset(&b, 0, sizeof b);
            cur++;
        } else {
            break;              /* the end line, or anything else: no more */
        }
    }
    free(b.data);               /* a test cut short: not reported */
    return SBX_OK;
}

void core_eval_batch_free(core_jr_test *tests, size_t n)
{
    for (size_t i = 0; tests && i < n; i++)
        free(tests[i].out);
    free(tests);
}

int core_eval_batch(sbx_sandbox *sb, const sbx_eval_opts *o, const sbx_template *tc,
                    const core_eval_task *t, size_t first, uint64_t limit, uint64_t out_cap,
                    uint64_t err_cap, uint64_t max_ns, core_jr_test **tests, sbx_result **res)
{
    size_t n = t->n_cases - first, in_len = 0, rlen = 0, blob_len, nv;
    bool py = core_eval_python_run(tc);
    const unsigned char *blob = py ? core_eval_driver_blob(&blob_len)
                                   : core_eval_runner_blob(&blob_len);
    const char *prov = sbx_sandbox_provider(sb) ? sbx_sandbox_provider(sb) : "";
    char marker[CORE_EVAL_MARKER_LEN + 1], key[PROV_NAME_MAX + sizeof PY_KEY], *in = NULL;
    const char **argv = NULL, *k, *v;
    const char *const *run = sbx_template_run(tc);
    sbx_exec_opts *x = NULL;
    sbx_result *r = NULL;
    const char *out;
    uint64_t timeout;
    int rc;

    *tests = NULL;
    *res = NULL;
    snprintf(key, sizeof key, "%.*s%s", PROV_NAME_MAX, prov, py ? PY_KEY : "");
    if (first >= t->n_cases || !run || !run[0] || runner_refused(key))
        return SBX_OK;
    if ((rc = core_eval_new_marker(marker)) != SBX_OK)
        return rc;
    nv = core_strv_len((char *const *)run);
    *tests = calloc(n, sizeof **tests);
    argv = calloc(nv + 4, sizeof *argv);
    in = stdin_of(t, first, marker, limit, out_cap, err_cap, !o->all_tests, &in_len);
    x = sbx_exec_opts_new();
    rc = (*tests && argv && in && x) ? SBX_OK : SBX_E_NOMEM;
    if (rc == SBX_OK && py) {      /* python3 RUNNER -- SCRIPT [ARG...] */
        argv[0] = run[0];
        argv[1] = CORE_JD_FILE;
        argv[2] = "--";
        memcpy(argv + 3, run + 1, (nv - 1) * sizeof *argv);
        rc = sbx_exec_opts_set_argv(x, argv);
    } else if (rc == SBX_OK) {
        argv[0] = "./" CORE_JR_FILE;
        argv[1] = "--";
        memcpy(argv + 2, run, nv * sizeof *argv);
        rc = sbx_exec_opts_set_argv(x, argv);
    }
    for (size_t i = 0; rc == SBX_OK && sbx_template_env(tc, i, &k, &v); i++)
        rc = sbx_exec_opts_add_env(x, k, v);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_add_file(x, py ? CORE_JD_FILE : CORE_JR_FILE, blob, blob_len,
                                    py ? 0644 : 0755);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_stdin(x, in, in_len);
    /* the runner holds each test to its limit; this only bounds a runner
     * that went wrong (one stopped by it leaves its last tests unreported) */
    timeout = limit > (UINT64_MAX - SLACK_NS) / (n + 1) ? UINT64_MAX
                                                        : (uint64_t)n * (limit + SLACK_NS / 10)
                                                              + SLACK_NS;
    if (max_ns && timeout > max_ns)
        timeout = max_ns;
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_timeout(x, timeout);
    if (rc == SBX_OK && o->cancel)
        rc = sbx_exec_opts_set_cancel(x, o->cancel);
    free(argv);
    free(in);
    if (rc == SBX_OK && sbx_sandbox_exec(sb, x, &r) != SBX_OK) {
        core_error_clear();     /* no report: every test runs on its own exec */
        sbx_result_free(r);
        r = NULL;
    }
    sbx_exec_opts_free(x);
    if (rc == SBX_OK && r && sbx_result_status(r) != SBX_RUN_SANDBOX_ERROR) {
        out = sbx_result_stdout(r, &rlen);
        note_start(key, r, out, rlen);
        rc = core_eval_batch_parse(out, rlen, marker, out_cap, *tests, n);
    }
    if (rc != SBX_OK) {
        sbx_result_free(r);
        core_eval_batch_free(*tests, n);
        *tests = NULL;
        return rc == SBX_E_NOMEM ? core_error_set(SBX_E_NOMEM, NULL, "out of memory") : rc;
    }
    *res = r;
    return SBX_OK;
}
