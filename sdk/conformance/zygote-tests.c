/* sdk/conformance/zygote-tests.c - python runs of a provider with zygotes
 *
 * A provider claiming SBX_CAP_ZYGOTE may fork runs of a template that
 * declares a zygote (templates.d/python.ini) from a warm interpreter.
 * These runs must keep every promise of a run started afresh: statuses,
 * exit codes, both streams, limits, and nothing of one run seen by the
 * next.
 */
#include "config.h"

#include "kit.h"

#include <stdio.h>
#include <string.h>

/* One run of @code as the python template; NULL when skipped or failed
 * (recorded). */
static sbx_result *py_run(conf_kit *k, conf_case *c, const char *code, uint64_t memory,
                          uint64_t timeout_ns)
{
    sbx_create_opts *o = conf_copts(k, c);
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_result *r = NULL;
    if (o == NULL || x == NULL)
        goto out;
    if (!conf_set_ok(c, "sbx_create_opts_set_template(python)",
                     sbx_create_opts_set_template(o, "python")) ||
        !conf_set_ok(c, "sbx_exec_opts_set_code(python)",
                     sbx_exec_opts_set_code(x, "python", code, (size_t)-1)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout",
                     sbx_exec_opts_set_timeout(x, timeout_ns)))
        goto out;
    if (memory && !conf_set_ok(c, "sbx_create_opts_set_limit(SBX_LIMIT_MEMORY)",
                               sbx_create_opts_set_limit(o, SBX_LIMIT_MEMORY, memory)))
        goto out;
    r = conf_run(k, c, o, x);
out:
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
    return r;
}

static void t_zygote(conf_kit *k, conf_case *c)
{
    char token[64], code[512];
    if (sbx_ctx_find_template(k->ctx, "python") == NULL) {
        conf_skip(c, "no python template in this configuration");
        return;
    }
    /* Exit code and both streams. */
    sbx_result *r = py_run(k, c,
                           "import sys\nprint('out')\nsys.stderr.write('err\\n')\nsys.exit(3)\n",
                           0, 20 * SEC_NS);
    if (r == NULL)
        return;
    if (r && sbx_result_status(r) == SBX_RUN_NOT_FOUND) {
        conf_skip(c, "no python3 in the sandbox");
        sbx_result_free(r);
        return;
    }
    if (conf_expect_status(c, "sys.exit(3)", SBX_RUN_NONZERO_EXIT, r)) {
        conf_expect_int(c, "exit code", 3, sbx_result_exit_code(r));
        conf_expect_stdout(c, "stdout", "out\n", r);
        conf_expect_stderr(c, "stderr", "err\n", r);
    }
    sbx_result_free(r);

    /* A file left in /tmp by one run is not seen by the next. */
    conf_token(token, sizeof token);
    snprintf(code, sizeof code, "open('/tmp/%s', 'w').write('x')\nprint('written')\n", token);
    r = py_run(k, c, code, 0, 20 * SEC_NS);
    if (r && conf_expect_status(c, "writing /tmp", SBX_RUN_OK, r))
        conf_expect_stdout(c, "stdout", "written\n", r);
    sbx_result_free(r);
    snprintf(code, sizeof code,
             "import os\nprint('seen' if os.path.exists('/tmp/%s') else 'absent')\n", token);
    r = py_run(k, c, code, 0, 20 * SEC_NS);
    if (r && conf_expect_status(c, "looking in /tmp", SBX_RUN_OK, r))
        conf_expect_stdout(c, "the next run's /tmp", "absent\n", r);
    sbx_result_free(r);

    /* The wall-clock limit. */
    r = py_run(k, c, "while True:\n    pass\n", 0, 1 * SEC_NS);
    if (r)
        conf_expect_status(c, "a busy loop under 1 s", SBX_RUN_TIMEOUT, r);
    sbx_result_free(r);

    /* The memory limit, where the provider enforces one. */
    if (k->caps & SBX_CAP_MEMORY_LIMIT) {
        r = py_run(k, c, "b = b'x' * (200 << 20)\nprint(len(b))\n", 64 * MIB, 20 * SEC_NS);
        if (r)
            conf_expect_status(c, "200 MiB under a 64 MiB limit", SBX_RUN_MEMORY_LIMIT, r);
        sbx_result_free(r);
    }
}

const conf_test conf_zygote_tests[] = {
    {"zygote", SBX_CAP_ZYGOTE, t_zygote,
     "python runs (forked from the template's zygote) keep exit code, both "
     "streams, the time and memory limits, and see no /tmp file of the run before"},
    {NULL, 0, NULL, NULL},
};
