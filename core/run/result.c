/* core/run/result.c - results: construction and accessors */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "result-int.h"

sbx_result *core_result_new(const char *provider, const char *sandbox_id)
{
    sbx_result *r = calloc(1, sizeof *r);

    if (!r)
        return NULL;
    r->exit_code = -1;
    r->cpu_ns = -1;
    r->peak_memory = -1;
    r->provider = strdup(provider ? provider : "");
    r->sandbox_id = strdup(sandbox_id ? sandbox_id : "");
    if (!r->provider || !r->sandbox_id) {
        sbx_result_free(r);
        return NULL;
    }
    return r;
}

void core_result_set_sandbox_error(sbx_result *r, int code, const char *msg)
{
    r->status = SBX_RUN_SANDBOX_ERROR;
    r->exit_code = -1;
    r->signal = 0;
    r->error_code = code ? code : SBX_E_BACKEND;
    free(r->error);
    r->error = strdup(msg && *msg ? msg : sbx_strerror(r->error_code));
}

void sbx_result_free(sbx_result *r)
{
    if (!r)
        return;
    core_buf_free(&r->out);
    core_buf_free(&r->err);
    core_buf_free(&r->compile_out);
    core_buf_free(&r->compile_err);
    core_artifacts_free(r);
    free(r->provider);
    free(r->sandbox_id);
    free(r->pool);
    free(r->error);
    free(r->unenforced_why);
    free(r);
}

sbx_run_status sbx_result_status(const sbx_result *r)
{
    return r ? r->status : SBX_RUN_SANDBOX_ERROR;
}

int sbx_result_exit_code(const sbx_result *r) { return r ? r->exit_code : -1; }
int sbx_result_signal(const sbx_result *r) { return r ? r->signal : 0; }

const void *sbx_result_stdout(const sbx_result *r, size_t *len)
{
    if (len)
        *len = r ? r->out.len : 0;
    return (r && r->out.data) ? (const void *)r->out.data : (const void *)"";
}

const void *sbx_result_stderr(const sbx_result *r, size_t *len)
{
    if (len)
        *len = r ? r->err.len : 0;
    return (r && r->err.data) ? (const void *)r->err.data : (const void *)"";
}

bool sbx_result_stdout_truncated(const sbx_result *r) { return r && r->out_truncated; }
bool sbx_result_stderr_truncated(const sbx_result *r) { return r && r->err_truncated; }

uint64_t sbx_result_timing(const sbx_result *r, sbx_timing which)
{
    if (!r || (unsigned)which > SBX_TIMING_COMPILE)
        return 0;
    return r->timing[which];
}

int64_t sbx_result_cpu_ns(const sbx_result *r) { return r ? r->cpu_ns : -1; }
int64_t sbx_result_peak_memory(const sbx_result *r) { return r ? r->peak_memory : -1; }
const char *sbx_result_provider(const sbx_result *r) { return r ? r->provider : NULL; }
const char *sbx_result_sandbox_id(const sbx_result *r) { return r ? r->sandbox_id : NULL; }
const char *sbx_result_pool(const sbx_result *r) { return r ? r->pool : NULL; }
const char *sbx_result_error(const sbx_result *r) { return r ? r->error : NULL; }
int sbx_result_error_code(const sbx_result *r) { return r ? r->error_code : 0; }
uint64_t sbx_result_unenforced_limits(const sbx_result *r) { return r ? r->unenforced : 0; }

const char *sbx_result_unenforced_reason(const sbx_result *r)
{
    return r && r->unenforced ? r->unenforced_why : NULL;
}

bool sbx_result_compile(const sbx_result *r, sbx_run_status *status, uint64_t *ns)
{
    if (!r || !r->compiled)
        return false;
    if (status)
        *status = r->compile_status;
    if (ns)
        *ns = r->compile_ns;
    return true;
}

static const void *buf_bytes(const core_buf *b, size_t *len)
{
    if (len)
        *len = b->len;
    return b->data ? (const void *)b->data : (const void *)"";
}

const void *sbx_result_compile_stdout(const sbx_result *r, size_t *len)
{
    static const core_buf none;
    return buf_bytes(r ? &r->compile_out : &none, len);
}

const void *sbx_result_compile_stderr(const sbx_result *r, size_t *len)
{
    static const core_buf none;
    return buf_bytes(r ? &r->compile_err : &none, len);
}
