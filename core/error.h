/* core/error.h - the thread's error (core/error.c)
 *
 * Ground floor: every file of the library may include it.
 */
#ifndef POLYSANDBOX_ERROR_H
#define POLYSANDBOX_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#define CORE_MSG_MAX 1024

struct sbx_error {
    int code;
    char provider[64];
    char message[CORE_MSG_MAX];
    uint64_t retry_after_ns; /* host->retry_after of the failing op, or 0 */
    bool not_started;        /* host->not_started: the exec never began */
};

/* The calling thread's error object (thread-local, one per thread). */
struct sbx_error *core_error_tls(void);
/* Reset the thread's error: every public entry point calls this first. */
void core_error_clear(void);
/* Set the thread's error; returns @code.  @provider may be NULL. */
int core_error_set(int code, const char *provider, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* For clang's analyser (contrib/analyze.sh), which sees one file at a time
 * and would otherwise assume that an error path's core_error_set(SBX_E_X,
 * ...) may return SBX_OK and walk on into code that only runs on success:
 * the value is @code, as core/error.c returns it. The build never sees
 * this; the function is called either way. */
#ifdef __clang_analyzer__
#define core_error_set(code, ...)                      \
    __extension__({                                    \
        int core_error_code_ = (code);                 \
        core_error_set(core_error_code_, __VA_ARGS__); \
        core_error_code_;                              \
    })
#endif
int core_error_vset(int code, const char *provider, const char *fmt, va_list ap);

#endif /* POLYSANDBOX_ERROR_H */
