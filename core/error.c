/* core/error.c - per-thread error objects and static error texts */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "error.h"

/* One error object per thread: contexts are shared between threads, so a
 * per-context object would race.  sbx_ctx_last_error() reads this one. */
static _Thread_local struct sbx_error tls_error;

struct sbx_error *core_error_tls(void)
{
    return &tls_error;
}

void core_error_clear(void)
{
    tls_error.code = SBX_OK;
    tls_error.provider[0] = '\0';
    tls_error.message[0] = '\0';
    tls_error.retry_after_ns = 0;
    tls_error.not_started = false;
}

int core_error_vset(int code, const char *provider, const char *fmt, va_list ap)
{
    tls_error.code = code;
    snprintf(tls_error.provider, sizeof tls_error.provider, "%s",
             provider ? provider : "");
    vsnprintf(tls_error.message, sizeof tls_error.message, fmt, ap);
    return code;
}

#undef core_error_set /* the analyser's view of it (error.h) */
int core_error_set(int code, const char *provider, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    core_error_vset(code, provider, fmt, ap);
    va_end(ap);
    return code;
}

const sbx_error *sbx_ctx_last_error(const sbx_ctx *ctx)
{
    (void)ctx;
    return &tls_error;
}

int sbx_error_code(const sbx_error *e)
{
    return e ? e->code : SBX_E_INVAL;
}

const char *sbx_error_message(const sbx_error *e)
{
    if (!e)
        return "";
    if (e->message[0] == '\0' && e->code != SBX_OK)
        return sbx_strerror(e->code);
    return e->message;
}

const char *sbx_error_provider(const sbx_error *e)
{
    return (e && e->provider[0]) ? e->provider : NULL;
}

/* The text of a code some SBX_E_* names, or NULL. */
static const char *text_of(int code)
{
    switch ((sbx_status)code) {
    case SBX_OK: return "success";
    case SBX_E_NOMEM: return "out of memory";
    case SBX_E_INVAL: return "invalid argument";
    case SBX_E_CONFIG: return "configuration error";
    case SBX_E_NOTSUP: return "operation not supported by the provider";
    case SBX_E_DECLINED: return "the provider declined the request";
    case SBX_E_NOT_FOUND: return "not found";
    case SBX_E_PROVIDER_UNAVAILABLE: return "provider unavailable";
    case SBX_E_BACKEND: return "backend error";
    case SBX_E_AUTH: return "authentication failed";
    case SBX_E_TIMEOUT: return "backend operation timed out";
    case SBX_E_IO: return "input/output error";
    case SBX_E_LIMIT: return "limit above the allowed maximum";
    case SBX_E_BUSY: return "resource busy";
    case SBX_E_NETWORK: return "network error";
    case SBX_E_RATE_LIMITED: return "rate limited by the backend";
    case SBX_E_PERM: return "operation not permitted";
    case SBX_E_EXISTS: return "already exists";
    case SBX_E_INTERNAL: return "internal error";
    case SBX_E_PATH: return "unsafe path refused";
    case SBX_E_SERVER: return "server error from the backend";
    case SBX_E_CANCELLED: return "cancelled";
    case SBX_E_LOAD_OPEN: return "provider module could not be opened";
    case SBX_E_LOAD_NO_SYMBOL: return "provider module has no sandbox_provider_v1 symbol";
    case SBX_E_LOAD_BAD_MAGIC: return "provider descriptor has a bad magic number";
    case SBX_E_LOAD_ABI_MAJOR: return "provider ABI major version differs from the core's";
    case SBX_E_LOAD_ABI_MINOR: return "provider ABI minor version is newer than the core's";
    case SBX_E_LOAD_SIZE: return "provider descriptor or ops table is too small";
    case SBX_E_LOAD_STRING: return "provider descriptor lacks a required string";
    case SBX_E_LOAD_NAME_MISMATCH: return "provider name differs from its file name";
    case SBX_E_LOAD_MISSING_OP: return "provider lacks a mandatory operation";
    case SBX_E_LOAD_CAPS: return "provider capabilities disagree with its operations";
    case SBX_E_LOAD_INIT: return "provider initialisation failed";
    case SBX_E_LOAD_BAD_NAME: return "provider name has invalid characters";
    case SBX_E_LOAD_RESERVED: return "provider descriptor has non-zero reserved fields";
    case SBX_E_LOAD_UNSAFE: return "provider module could be changed by another user";
    }
    return NULL;
}

const char *sbx_strerror(int code)
{
    const char *text = text_of(code);
    return text ? text : "unknown error";
}

bool sbx_error_known(int code)
{
    return text_of(code) != NULL;
}

const char *sbx_run_status_name(sbx_run_status s)
{
    static const char *const names[SBX_RUN_STATUS_COUNT] = {
        [SBX_RUN_OK] = "ok",
        [SBX_RUN_NONZERO_EXIT] = "nonzero_exit",
        [SBX_RUN_SIGNAL] = "signal",
        [SBX_RUN_TIMEOUT] = "timeout",
        [SBX_RUN_CPU_LIMIT] = "cpu_limit",
        [SBX_RUN_MEMORY_LIMIT] = "memory_limit",
        [SBX_RUN_OUTPUT_LIMIT] = "output_limit",
        [SBX_RUN_COMPILE_ERROR] = "compile_error",
        [SBX_RUN_SANDBOX_ERROR] = "sandbox_error",
        [SBX_RUN_NOT_FOUND] = "not_found",
        [SBX_RUN_NOT_EXECUTABLE] = "not_executable",
        [SBX_RUN_SECCOMP] = "seccomp",
        [SBX_RUN_PIDS_LIMIT] = "pids_limit",
    };
    if ((unsigned)s >= SBX_RUN_STATUS_COUNT)
        return "unknown";
    return names[s];
}

const char *sbx_capability_name(uint64_t bit)
{
    static const char *const names[] = {
        "files", "persistent", "labels", "stream", "stdin",
        "network_policy", "list", "concurrent", "memory_limit", "cpu_stats",
        "zygote", "cancel", "stdin_stream", "signal", "egress",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (bit == (UINT64_C(1) << i))
            return names[i];
    return NULL;
}
