/* core/eval/eval-verdict.c - from a run's result to a verdict on the sample */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"

static const char *const verdict_names[SBX_VERDICT_COUNT] = {
    [SBX_VERDICT_PASSED] = "passed",
    [SBX_VERDICT_FAILED] = "failed",
    [SBX_VERDICT_TIMEOUT] = "timeout",
    [SBX_VERDICT_CPU_LIMIT] = "cpu_limit",
    [SBX_VERDICT_MEMORY_LIMIT] = "memory_limit",
    [SBX_VERDICT_OUTPUT_LIMIT] = "output_limit",
    [SBX_VERDICT_COMPILE_ERROR] = "compile_error",
    [SBX_VERDICT_SIGNAL] = "signal",
    [SBX_VERDICT_SECCOMP] = "seccomp",
    [SBX_VERDICT_PIDS_LIMIT] = "pids_limit",
    [SBX_VERDICT_SANDBOX_ERROR] = "sandbox_error",
    [SBX_VERDICT_NO_TEMPLATE] = "no_template",
};

bool sbx_eval_verdict_graded(sbx_eval_verdict v)
{
    return (unsigned)v < SBX_VERDICT_COUNT && v != SBX_VERDICT_SANDBOX_ERROR &&
           v != SBX_VERDICT_NO_TEMPLATE;
}

const char *sbx_eval_verdict_name(sbx_eval_verdict v)
{
    return (unsigned)v < SBX_VERDICT_COUNT ? verdict_names[v] : NULL;
}

int core_eval_verdict_from_name(const char *name)
{
    for (int i = 0; i < SBX_VERDICT_COUNT; i++)
        if (!strcmp(verdict_names[i], name))
            return i;
    return -1;
}

/* Whether stdout holds the line "\n<prefix><word><marker>\n". */
static bool has_line(const sbx_result *r, const char *word, const char *marker)
{
    char line[sizeof CORE_EVAL_MARKER_PREFIX + sizeof CORE_EVAL_MARKER_BASE +
              CORE_EVAL_MARKER_LEN + 4];
    size_t len, n;
    const void *out = sbx_result_stdout(r, &len);

    n = (size_t)snprintf(line, sizeof line, "\n%s%s%s\n", CORE_EVAL_MARKER_PREFIX, word,
                         marker);
    return out && n < sizeof line && len >= n && memmem(out, len, line, n) != NULL;
}

static bool has_marker(const sbx_result *r, const char *marker)
{
    return has_line(r, "", marker);
}

bool core_eval_base_passed(const sbx_result *r, const char *marker)
{
    return marker && has_line(r, CORE_EVAL_MARKER_BASE, marker);
}

sbx_eval_verdict core_eval_verdict(const sbx_result *r, const char *marker,
                                   const char **reason)
{
    *reason = NULL;
    switch (sbx_result_status(r)) {
    case SBX_RUN_OK:
        if (!marker || has_marker(r, marker))
            return SBX_VERDICT_PASSED;
        if (sbx_result_stdout_truncated(r)) {
            *reason = "its output passed the cap before the tests completed";
            return SBX_VERDICT_OUTPUT_LIMIT;
        }
        *reason = "exited 0 before its tests completed (sys.exit or os._exit in the code?)";
        return SBX_VERDICT_FAILED;
    case SBX_RUN_NONZERO_EXIT:
        *reason = "exited with a non-zero status (a failed assertion or an exception)";
        return SBX_VERDICT_FAILED;
    case SBX_RUN_NOT_FOUND:
        *reason = "the command was not found";
        return SBX_VERDICT_FAILED;
    case SBX_RUN_NOT_EXECUTABLE:
        *reason = "the command could not be executed";
        return SBX_VERDICT_FAILED;
    case SBX_RUN_SIGNAL:
        *reason = "killed by a signal";
        return SBX_VERDICT_SIGNAL;
    case SBX_RUN_TIMEOUT:
        *reason = "wall-clock limit reached";
        return SBX_VERDICT_TIMEOUT;
    case SBX_RUN_CPU_LIMIT:
        *reason = "CPU-time limit reached";
        return SBX_VERDICT_CPU_LIMIT;
    case SBX_RUN_MEMORY_LIMIT:
        *reason = "memory limit reached";
        return SBX_VERDICT_MEMORY_LIMIT;
    case SBX_RUN_OUTPUT_LIMIT:
        *reason = "wrote more than the output cap";
        return SBX_VERDICT_OUTPUT_LIMIT;
    case SBX_RUN_COMPILE_ERROR:
        *reason = "the compile step failed";
        return SBX_VERDICT_COMPILE_ERROR;
    case SBX_RUN_SECCOMP:
        *reason = "killed by the system-call filter";
        return SBX_VERDICT_SECCOMP;
    case SBX_RUN_PIDS_LIMIT:
        *reason = "process-count limit reached";
        return SBX_VERDICT_PIDS_LIMIT;
    case SBX_RUN_SANDBOX_ERROR:
    default:
        *reason = "sandbox error";
        return SBX_VERDICT_SANDBOX_ERROR;
    }
}
