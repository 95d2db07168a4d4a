/* polysandbox/provider-test.h - a host table for a provider's unit tests
 *
 * A provider's ops take the core's host table (sbx_host_v1).  To test
 * them without the whole orchestrator (no configuration files, no
 * loader, no other provider), a test makes a test host, gives it the
 * settings and credentials a providers.d/NAME.ini would hold, hands its
 * table and handle to ops->init and then reads back what the provider
 * told the core: the last error, the retry hints, the limits it reported
 * it could not apply, its log lines.  settings_read reads with the core's
 * own grammar and messages, so a test sees exactly what a user would.
 *
 * Build against it with `pkg-config --cflags --libs polysandbox-provider-test`
 * (the SDK's headers and libpolysandbox, which holds the test host; the
 * provider module itself never links libpolysandbox).
 *
 * Threads: a test host may be used by several threads at once (the
 * provider's ops may run concurrently); what it records is the last
 * thing any thread reported.  Since: 0.3
 */
#ifndef POLYSANDBOX_PROVIDER_TEST_H
#define POLYSANDBOX_PROVIDER_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include <polysandbox/provider.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SBX_TEST_API
#define SBX_TEST_API __attribute__((visibility("default")))
#endif

/** sbx_test_host: opaque; one per provider under test.  Since: 0.3 */
typedef struct sbx_test_host sbx_test_host;

/**
 * sbx_test_host_new:
 * @desc: (transfer none): the provider's descriptor, kept by pointer
 *   (it is static): its name tags log lines and errors, and its
 *   config_keys and secret_keys decide which settings exist, as the
 *   loader does.
 *
 * Returns: (transfer full) a host without settings, whose state_dir is
 * NULL until set, which accepts every limit a provider reports it cannot
 * apply; NULL when @desc is NULL or out of memory.  Free with sbx_test_host_free.
 * Since: 0.3
 */
SBX_TEST_API sbx_test_host *sbx_test_host_new(const sbx_provider_v1 *desc);

/** sbx_test_host_free: free @t and everything it copied.  Call it after
 * the provider's fini.  NULL is fine.  Since: 0.3 */
SBX_TEST_API void sbx_test_host_free(sbx_test_host *t);

/**
 * sbx_test_host_set:
 * @key: (transfer none) a config or secret key of the descriptor
 * @value: (transfer none) the value, as the ini file would hold it
 *
 * Sets (or replaces) a setting; both strings are copied.  config_get,
 * secret_get and settings_read then see it; errors about it name the
 * place "test host".
 * Returns: SBX_OK; SBX_E_CONFIG when the descriptor declares no such key
 * (with the message the loader would give); SBX_E_NOMEM.  Since: 0.3
 */
SBX_TEST_API int sbx_test_host_set(sbx_test_host *t, const char *key, const char *value);

/** sbx_test_host_set_state_dir: what host->state_dir answers (copied;
 * NULL for none).  Returns SBX_OK or SBX_E_NOMEM.  Since: 0.3 */
SBX_TEST_API int sbx_test_host_set_state_dir(sbx_test_host *t, const char *dir);

/** sbx_test_host_refuse_unenforced: when @refuse, host->limits_unenforced
 * answers SBX_E_PERM (an administrator's unenforced_limits = none), else
 * SBX_OK (the default).  Since: 0.3 */
SBX_TEST_API void sbx_test_host_refuse_unenforced(sbx_test_host *t, bool refuse);

/** sbx_test_host_table: (transfer none) the table to hand to ops->init,
 * valid until sbx_test_host_free.  Since: 0.3 */
SBX_TEST_API const sbx_host_v1 *sbx_test_host_table(sbx_test_host *t);

/** sbx_test_host_handle: (transfer none) the handle to hand to ops->init
 * with the table.  Since: 0.3 */
SBX_TEST_API sbx_host_handle *sbx_test_host_handle(sbx_test_host *t);

/**
 * sbx_test_host_error:
 * @message: (out) (optional) (transfer none): the message, "" when none;
 *   valid until the next call on @t
 *
 * Returns: the code of the last set_error (or of a failed settings_read
 * or secret_get), SBX_OK when none since sbx_test_host_clear.  Since: 0.3
 */
SBX_TEST_API int sbx_test_host_error(sbx_test_host *t, const char **message);

/** sbx_test_host_clear: forget the error, the retry hints and the
 * reported limits, as the core does before each op.  Since: 0.3 */
SBX_TEST_API void sbx_test_host_clear(sbx_test_host *t);

/** sbx_test_host_retry_after_ms: the last host->retry_after, 0 if none
 * (create's hint, or any op's of a provider before ABI 1.12; since 1.12
 * an exec's is in its outcome: read out.retry_after_ms).  Since: 0.3 */
SBX_TEST_API uint64_t sbx_test_host_retry_after_ms(sbx_test_host *t);

/** sbx_test_host_not_started: whether host->not_started was called
 * (deprecated with it: since ABI 1.12 an exec says so in its outcome's
 * not_started, which a test reads there).  Since: 0.3 */
SBX_TEST_API bool sbx_test_host_not_started(sbx_test_host *t);

/**
 * sbx_test_host_unenforced:
 * @why: (out) (optional) (transfer none): the last reason given, "" when
 *   none; valid until the next call on @t
 *
 * Returns: the SBX_LIMIT_BIT_* the provider reported through
 * host->limits_unenforced, or-ed.  Since: 0.3
 */
SBX_TEST_API uint64_t sbx_test_host_unenforced(sbx_test_host *t, const char **why);

/** sbx_test_host_log_count: how many lines the provider logged at
 * @level (SBX_LOG_*) or more severe.  Since: 0.3 */
SBX_TEST_API size_t sbx_test_host_log_count(sbx_test_host *t, int level);

/** sbx_test_host_advance_clock: move host->clock_ns @ns nanoseconds
 * forward (it is CLOCK_MONOTONIC plus every advance so far), to test a
 * provider's deadlines and ages without waiting.  Since: 0.3 */
SBX_TEST_API void sbx_test_host_advance_clock(sbx_test_host *t, uint64_t ns);

/** sbx_test_host_verbose: when @verbose, every log line goes to stderr
 * too; by default only warnings and errors do.  Since: 0.3 */
SBX_TEST_API void sbx_test_host_verbose(sbx_test_host *t, bool verbose);

/**
 * sbx_test_host_leaks:
 * @text: (out) (optional) (transfer none): the last such message, ""
 *   when none; valid until the next call on @t
 * A provider promises never to put a credential in a log line or an
 * error message (they reach users' terminals, logs and reports).  The
 * test host checks every line and message it is given against the value
 * of every credential set on it.
 * Returns: how many log lines and error messages held a credential's
 * value since sbx_test_host_new.  Since: 0.3
 */
SBX_TEST_API size_t sbx_test_host_leaks(sbx_test_host *t, const char **text);

/**
 * sbx_test_host_misuses:
 * @what: (out) (optional) (transfer none): what the last misuse was, ""
 *   when none; valid until the next call on @t
 * Returns: how many times the provider broke the host table's contract
 * in a way the host can see since sbx_test_host_new: set_error with
 * SBX_OK or a code outside the SBX_E_* range, a log level outside
 * SBX_LOG_*.  Since: 0.3
 */
SBX_TEST_API size_t sbx_test_host_misuses(sbx_test_host *t, const char **what);

/**
 * sbx_test_host_watch_fn:
 * @ud: what sbx_test_host_watch was given
 * @is_error: true for set_error (then @n is the code), false for a log
 *   line (then @n is its SBX_LOG_* level)
 * @text: (transfer none) the message as formatted, valid during the call
 * Called on the provider's thread, after the host recorded the message,
 * without any lock of the host held.  Since: 0.3
 */
typedef void (*sbx_test_host_watch_fn)(void *ud, bool is_error, int n, const char *text);

/** sbx_test_host_watch: have @fn called with every log line and error
 * the provider writes (NULL stops it), for checks of a test's own (a
 * fuzz harness that breaks off at the first bad message, say).  Set it
 * before init.  Since: 0.3 */
SBX_TEST_API void sbx_test_host_watch(sbx_test_host *t, sbx_test_host_watch_fn fn, void *ud);

#ifdef __cplusplus
}
#endif

#endif /* POLYSANDBOX_PROVIDER_TEST_H */
