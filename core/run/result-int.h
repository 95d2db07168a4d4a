/* core/run/result-int.h - the insides of a result (core only) */
#ifndef POLYSANDBOX_RESULT_INT_H
#define POLYSANDBOX_RESULT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#include "buf.h"

/* A file of the template's artifacts directory: kept (data set) or left
 * out (why set, data NULL). */
typedef struct core_artifact {
    char *path;               /* relative to the artifacts directory */
    uint64_t size;
    const char *mime;         /* static string; NULL when left out */
    unsigned char *data;      /* size bytes, or NULL */
    char *why;                /* why it was left out, or NULL */
} core_artifact;

struct sbx_result {
    sbx_run_status status;
    int exit_code;
    int signal;
    core_buf out, err;
    bool out_truncated, err_truncated;
    uint64_t timing[5];       /* indexed by sbx_timing */
    int64_t cpu_ns;
    int64_t peak_memory;
    char *provider;
    char *sandbox_id;
    char *pool;               /* the pool that lent the sandbox (a hit), or NULL */
    char *error;              /* sandbox or compile error text, or NULL */
    int error_code;
    uint64_t retry_after_ns;  /* Retry-After of a failed exec, or 0 */
    uint64_t unenforced;      /* SBX_LIMIT_BIT_* the sandbox ran without */
    char *unenforced_why;     /* and why, or NULL */
    bool compiled;            /* a template's compile step ran */
    sbx_run_status compile_status; /* its own status (before COMPILE_ERROR) */
    uint64_t compile_ns;      /* how long it ran */
    core_buf compile_out, compile_err; /* what it wrote */
    core_artifact *artifacts; /* kept and left out, in listing order */
    size_t n_artifacts;
};

/* A zeroed result with unknown figures at -1; NULL on ENOMEM. */
sbx_result *core_result_new(const char *provider, const char *sandbox_id);
/* Mark @r a sandbox error with @code and @msg (copied). */
void core_result_set_sandbox_error(sbx_result *r, int code, const char *msg);

/* Free the artifacts of @r (core/run/artifacts.c). */
void core_artifacts_free(sbx_result *r);

#endif
